package gmail

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
)

// maxRecipients bounds one message's To list.
const maxRecipients = 50

// outgoing is a message to draft or send.
type outgoing struct {
	To      []string
	Subject string
	Body    string
	// Set when answering a thread: the Message-ID answered and the
	// References chain, so that mail clients thread the answer too.
	InReplyTo, References string
}

// recipients parses the To list; each item may itself be a comma-separated
// list. Line breaks are refused outright: they would start new headers.
func recipients(to []string) ([]string, error) {
	var out []string
	for _, item := range to {
		if strings.ContainsAny(item, "\r\n") {
			return nil, errors.New("a recipient holds a line break")
		}
		if strings.TrimSpace(item) == "" {
			continue
		}
		list, err := mail.ParseAddressList(item)
		if err != nil {
			return nil, fmt.Errorf("%q is not an email address: %w", item, err)
		}
		for _, a := range list {
			out = append(out, a.String())
		}
	}
	switch {
	case len(out) == 0:
		return nil, errors.New("to names no recipient")
	case len(out) > maxRecipients:
		return nil, fmt.Errorf("to names %d recipients, at most %d are allowed", len(out), maxRecipients)
	}
	return out, nil
}

// raw renders the message in RFC 2822 form, base64url-encoded as the service
// takes it: a UTF-8 plain-text body in quoted-printable.
func (m outgoing) raw() (string, error) {
	to, err := recipients(m.To)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		return "", errors.New("the subject holds a line break")
	}
	if strings.ContainsAny(m.InReplyTo+m.References, "\r\n") {
		return "", errors.New("the answered message's ids hold a line break")
	}
	var b bytes.Buffer
	hdr := func(name, value string) {
		if value != "" {
			b.WriteString(name + ": " + value + "\r\n")
		}
	}
	hdr("To", strings.Join(to, ", "))
	hdr("Subject", mime.QEncoding.Encode("utf-8", strings.TrimSpace(m.Subject)))
	hdr("In-Reply-To", m.InReplyTo)
	hdr("References", m.References)
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", `text/plain; charset="UTF-8"`)
	hdr("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	body := strings.ReplaceAll(strings.ReplaceAll(m.Body, "\r\n", "\n"), "\n", "\r\n")
	if _, err := qp.Write([]byte(body)); err != nil {
		return "", err
	}
	if err := qp.Close(); err != nil {
		return "", err
	}
	return base64.URLEncoding.EncodeToString(b.Bytes()), nil
}

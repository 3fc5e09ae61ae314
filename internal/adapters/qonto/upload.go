package qonto

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/workspacefiles"
)

// What upload_invoice sends and how long it waits for Qonto's background
// processing of the file.
const (
	// MaxInvoice is the largest file Qonto takes as an attachment (15 MB).
	MaxInvoice = 15_000_000
	// DefaultWait is how long a call waits for the attachment to appear.
	DefaultWait = 60 * time.Second
	// DefaultPoll is how often it looks.
	DefaultPoll = 2 * time.Second
	// deadlineMargin is kept of the call's own deadline to answer in.
	deadlineMargin = 2 * time.Second
	// UploadTimeout bounds one upload_invoice call: sending up to
	// MaxInvoice bytes, then DefaultWait, then the answer.
	UploadTimeout = DefaultWait + 20*time.Second
)

// invoiceTypes are the types Qonto accepts, judged by content.
var invoiceTypes = []string{"application/pdf", "image/jpeg", "image/png"}

// idempotencySpace names the idempotency keys of uploads: one transaction
// and one file content always make the same key, so a retried call does not
// attach the file twice.
var idempotencySpace = uuid.MustParse("5d3c8e2a-1f0b-4c6e-9a7d-2b4f6e8c0a13")

type uploadArgs struct {
	TransactionID string `json:"transaction_id"`
	Path          string `json:"path"`
}

type attachmentsAnswer struct {
	Attachments []attachment `json:"attachments"`
}

type attachment struct {
	ID              string `json:"id"`
	FileName        string `json:"file_name"`
	FileSize        any    `json:"file_size"`
	FileContentType string `json:"file_content_type"`
}

// uploadInvoice attaches a PDF, JPEG or PNG of the agent's workspace to a
// transaction (multipart, field file, as Qonto takes it), then waits for
// Qonto's background processing to show the new attachment on the
// transaction, for up to a minute.
func uploadInvoice(ctx context.Context, a *Adapter, c adapters.Conn, h http.Header, raw json.RawMessage) (string, error) {
	var in uploadArgs
	if err := decode("upload_invoice", raw, &in); err != nil {
		return "", err
	}
	id, err := transactionID(in.TransactionID)
	if err != nil {
		return "", fmt.Errorf("upload_invoice: transaction_id: %w", err)
	}
	if _, err := workspacefiles.Clean("path", in.Path); err != nil {
		return "", fmt.Errorf("upload_invoice: %w", err)
	}
	ws, agent, err := workspacefiles.From(ctx)
	if err != nil {
		return "", fmt.Errorf("upload_invoice: the file is read from the agent workspace; nothing was sent to Qonto: %w", err)
	}
	f, err := workspacefiles.Read(ctx, ws, agent, "path", in.Path, MaxInvoice, invoiceTypes...)
	if err != nil {
		return "", fmt.Errorf("upload_invoice: %w", err)
	}
	attachmentsPath := "/v2/transactions/" + url.PathEscape(id) + "/attachments"
	before, err := attachmentIDs(ctx, c, h, attachmentsPath)
	var he *adapters.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return "", fmt.Errorf("upload_invoice: transaction_id: Qonto has no transaction %q (use the id column of list_missing_invoices): %w", id, err)
	} else if err != nil {
		return "", err
	}

	body, contentType, err := multipartFile(f)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(f.Content)
	post := h.Clone()
	post.Set("Content-Type", contentType)
	post.Set("X-Qonto-Idempotency-Key", uuid.NewSHA1(idempotencySpace, append([]byte(id+"\x00"), sum[:]...)).String())
	if err := c.DoJSON(ctx, http.MethodPost, c.BaseURL, attachmentsPath, nil, post, body, nil); err != nil {
		return "", fmt.Errorf("upload_invoice: Qonto refused the file: %w", err)
	}

	clock := a.clock()
	started := clock.Now()
	since := func() time.Duration { return clock.Now().Sub(started) }
	wait := a.wait()
	if dl, ok := ctx.Deadline(); ok && time.Until(dl)-deadlineMargin < wait {
		wait = max(time.Until(dl)-deadlineMargin, 0)
	}
	t := adapters.NewTable("status", "transaction_id", "attachment_id", "file_name", "file_size", "content_type", "waited_s")
	for {
		got, err := attachmentsOf(ctx, c, h, attachmentsPath)
		if err == nil {
			for _, att := range got {
				if !before[att.ID] {
					t.Add("attached", id, att.ID, att.FileName, fmt.Sprint(att.FileSize), att.FileContentType, seconds(since()))
					return t.String(), nil
				}
			}
		}
		if since()+a.poll() > wait || ctx.Err() != nil {
			break
		}
		select {
		case <-clock.After(a.poll()):
		case <-ctx.Done():
		}
	}
	waited := seconds(since())
	t.Add("processing", id, "", f.Name, len(f.Content), f.Type, waited)
	return t.String() + fmt.Sprintf("Qonto accepted %s but had not finished processing it after %s; get_transaction shows the attachment once it is done. Do not upload it again.\n",
		f.Path, waited+" s"), nil
}

func (a *Adapter) wait() time.Duration {
	if a.Wait > 0 {
		return a.Wait
	}
	return DefaultWait
}

func (a *Adapter) poll() time.Duration {
	if a.Poll > 0 {
		return a.Poll
	}
	return DefaultPoll
}

func (a *Adapter) clock() WaitClock {
	if a.Clock != nil {
		return a.Clock
	}
	return wallClock{}
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func seconds(d time.Duration) string { return fmt.Sprintf("%.0f", d.Seconds()) }

func attachmentsOf(ctx context.Context, c adapters.Conn, h http.Header, path string) ([]attachment, error) {
	var ans attachmentsAnswer
	if err := c.GetJSON(ctx, path, nil, h, &ans); err != nil {
		return nil, err
	}
	return ans.Attachments, nil
}

func attachmentIDs(ctx context.Context, c adapters.Conn, h http.Header, path string) (map[string]bool, error) {
	got, err := attachmentsOf(ctx, c, h, path)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]bool, len(got))
	for _, att := range got {
		ids[att.ID] = true
	}
	return ids, nil
}

// multipartFile is the form Qonto takes: one part named file, with the
// file's name and its type as detected from its content.
func multipartFile(f workspacefiles.File) (*bytes.Buffer, string, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	hdr := textproto.MIMEHeader{}
	name := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", "").Replace(f.Name)
	hdr.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	hdr.Set("Content-Type", f.Type)
	part, err := w.CreatePart(hdr)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write(f.Content); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return &b, w.FormDataContentType(), nil
}

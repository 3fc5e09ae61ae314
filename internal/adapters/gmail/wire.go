package gmail

import (
	"strconv"
	"strings"
	"time"
)

// The service's resources, reduced to the fields the tables use.

type profile struct {
	EmailAddress  string `json:"emailAddress"`
	MessagesTotal int64  `json:"messagesTotal"`
	ThreadsTotal  int64  `json:"threadsTotal"`
}

type threadList struct {
	Threads []struct {
		ID      string `json:"id"`
		Snippet string `json:"snippet"`
	} `json:"threads"`
	ResultSizeEstimate int64 `json:"resultSizeEstimate"`
}

type thread struct {
	ID       string    `json:"id"`
	Messages []message `json:"messages"`
}

type draftList struct {
	Drafts []struct {
		ID string `json:"id"`
	} `json:"drafts"`
}

type draft struct {
	ID      string  `json:"id"`
	Message message `json:"message"`
}

type message struct {
	ID           string   `json:"id"`
	ThreadID     string   `json:"threadId"`
	LabelIDs     []string `json:"labelIds"`
	Snippet      string   `json:"snippet"`
	InternalDate string   `json:"internalDate"` // ms since the epoch, as a string
	Payload      *part    `json:"payload"`
}

type part struct {
	PartID   string   `json:"partId"`
	MimeType string   `json:"mimeType"`
	Filename string   `json:"filename"`
	Headers  []header `json:"headers"`
	Body     struct {
		AttachmentID string `json:"attachmentId"`
		Size         int64  `json:"size"`
		Data         string `json:"data"`
	} `json:"body"`
	Parts []part `json:"parts"`
}

type header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type labelList struct {
	Labels []label `json:"labels"`
}

type label struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"` // "system" or "user"
}

// header returns a message's first header of that name (names are
// case-insensitive), or "".
func (m message) header(name string) string {
	if m.Payload == nil {
		return ""
	}
	for _, h := range m.Payload.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// date is the time the service received the message, in UTC minutes.
func (m message) date() string {
	ms, err := strconv.ParseInt(m.InternalDate, 10, 64)
	if err != nil || ms <= 0 {
		return m.header("Date")
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04")
}

package gmail

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/guilds/guilds/internal/adapters"
)

// parallelReads bounds the per-item reads a list answer makes (the list
// endpoints give ids only).
const parallelReads = 5

// listHeaders are the headers a metadata read asks for.
var listHeaders = []string{"From", "Subject"}

func metadataQuery(headers ...string) url.Values {
	return url.Values{"format": {"metadata"}, "metadataHeaders": headers}
}

func searchThreads(ctx context.Context, c adapters.Conn, in args) (string, error) {
	n := adapters.Rows(in.Limit)
	q := url.Values{"maxResults": {strconv.Itoa(n)}}
	if s := strings.TrimSpace(in.Query); s != "" {
		q.Set("q", s)
	}
	var list threadList
	if err := get(ctx, c, "/users/me/threads", q, &list); err != nil {
		return "", err
	}
	found := list.Threads[:min(n, len(list.Threads))]
	threads := make([]thread, len(found))
	err := readEach(ctx, len(found), func(ctx context.Context, i int) error {
		err := get(ctx, c, "/users/me/threads/"+found[i].ID, metadataQuery(listHeaders...), &threads[i])
		if isStatus(err, http.StatusNotFound) {
			return nil // deleted since the search: the row keeps the search's snippet
		}
		return err
	})
	if err != nil {
		return "", err
	}
	t := adapters.NewTable("thread", "last_date", "last_from", "subject", "messages", "snippet")
	for i, f := range found {
		ms := threads[i].Messages
		var first, last message
		if len(ms) > 0 {
			first, last = ms[0], ms[len(ms)-1]
		}
		t.Add(f.ID, last.date(), last.header("From"), first.header("Subject"), len(ms), snippet(f.Snippet))
	}
	return t.String(), nil
}

func getThread(ctx context.Context, c adapters.Conn, in args) (string, error) {
	if err := checkID("thread", in.ID); err != nil {
		return "", err
	}
	var th thread
	if err := get(ctx, c, "/users/me/threads/"+in.ID, url.Values{"format": {"full"}}, &th); err != nil {
		return "", notFound(err, "thread", in.ID)
	}
	// A very long thread keeps its latest messages.
	ms := th.Messages[max(0, len(th.Messages)-adapters.MaxRows):]
	t := adapters.NewTable("message", "date", "from", "to", "subject", "attachments", "body")
	prevSubject := ""
	for _, m := range ms {
		subject := m.header("Subject")
		shown := subject
		if subject == prevSubject {
			shown = "" // the thread's subject once, and again only when it changes
		}
		prevSubject = subject
		body := oneLine(withoutQuotes(bodyText(m.Payload)))
		t.Add(m.ID, m.date(), m.header("From"), m.header("To"), shown, attachments(m.Payload), clipText(body, threadBodyRunes))
	}
	return t.String(), nil
}

func getMessage(ctx context.Context, c adapters.Conn, in args) (string, error) {
	if err := checkID("message", in.ID); err != nil {
		return "", err
	}
	var m message
	if err := get(ctx, c, "/users/me/messages/"+in.ID, url.Values{"format": {"full"}}, &m); err != nil {
		return "", notFound(err, "message", in.ID)
	}
	t := adapters.NewTable("message", "thread", "date", "from", "to", "cc", "subject", "labels", "attachments", "body")
	t.Add(m.ID, m.ThreadID, m.date(), m.header("From"), m.header("To"), m.header("Cc"), m.header("Subject"),
		strings.Join(m.LabelIDs, ","), attachments(m.Payload), clipText(oneLine(bodyText(m.Payload)), messageBodyRunes))
	return t.String(), nil
}

func listLabels(ctx context.Context, c adapters.Conn, in args) (string, error) {
	var list labelList
	if err := get(ctx, c, "/users/me/labels", nil, &list); err != nil {
		return "", err
	}
	ls := list.Labels
	// The account's own labels first: the system ones are the same everywhere.
	sort.SliceStable(ls, func(i, j int) bool {
		if (ls[i].Type == "system") != (ls[j].Type == "system") {
			return ls[j].Type == "system"
		}
		return strings.ToLower(ls[i].Name) < strings.ToLower(ls[j].Name)
	})
	t := adapters.NewTable("id", "name", "type")
	for _, l := range ls[:min(adapters.Rows(in.Limit), len(ls))] {
		t.Add(l.ID, l.Name, l.Type)
	}
	return t.String(), nil
}

func listDrafts(ctx context.Context, c adapters.Conn, in args) (string, error) {
	n := adapters.Rows(in.Limit)
	var list draftList
	if err := get(ctx, c, "/users/me/drafts", url.Values{"maxResults": {strconv.Itoa(n)}}, &list); err != nil {
		return "", err
	}
	found := list.Drafts[:min(n, len(list.Drafts))]
	drafts := make([]draft, len(found))
	err := readEach(ctx, len(found), func(ctx context.Context, i int) error {
		err := get(ctx, c, "/users/me/drafts/"+found[i].ID, url.Values{"format": {"metadata"}}, &drafts[i])
		if isStatus(err, http.StatusNotFound) {
			return nil // sent or deleted since the list
		}
		return err
	})
	if err != nil {
		return "", err
	}
	t := adapters.NewTable("draft", "thread", "date", "to", "subject", "snippet")
	for i, f := range found {
		m := drafts[i].Message
		t.Add(f.ID, m.ThreadID, m.date(), m.header("To"), m.header("Subject"), snippet(m.Snippet))
	}
	return t.String(), nil
}

func createDraft(ctx context.Context, c adapters.Conn, in args) (string, error) {
	raw, err := compose(ctx, c, in)
	if err != nil {
		return "", err
	}
	var d draft
	msg := map[string]string{"raw": raw}
	if in.ThreadID != "" {
		msg["threadId"] = in.ThreadID
	}
	if err := post(ctx, c, "/users/me/drafts", map[string]any{"message": msg}, &d); err != nil {
		return "", err
	}
	t := adapters.NewTable("draft", "message", "thread")
	t.Add(d.ID, d.Message.ID, d.Message.ThreadID)
	return t.String(), nil
}

func sendMessage(ctx context.Context, c adapters.Conn, in args) (string, error) {
	raw, err := compose(ctx, c, in)
	if err != nil {
		return "", err
	}
	body := map[string]string{"raw": raw}
	if in.ThreadID != "" {
		body["threadId"] = in.ThreadID
	}
	var m message
	if err := post(ctx, c, "/users/me/messages/send", body, &m); err != nil {
		return "", err
	}
	t := adapters.NewTable("message", "thread", "labels")
	t.Add(m.ID, m.ThreadID, strings.Join(m.LabelIDs, ","))
	return t.String(), nil
}

// compose builds the raw message of a draft or a send; an answer to a
// thread carries the ids of the thread's latest message.
func compose(ctx context.Context, c adapters.Conn, in args) (string, error) {
	out := outgoing{To: in.To, Subject: in.Subject, Body: in.Body}
	if in.ThreadID != "" {
		if err := checkID("thread", in.ThreadID); err != nil {
			return "", err
		}
		var th thread
		err := get(ctx, c, "/users/me/threads/"+in.ThreadID, metadataQuery("Message-ID", "References"), &th)
		if err != nil {
			return "", notFound(err, "thread", in.ThreadID)
		}
		if len(th.Messages) > 0 {
			last := th.Messages[len(th.Messages)-1]
			out.InReplyTo = last.header("Message-ID")
			out.References = strings.TrimSpace(last.header("References") + " " + out.InReplyTo)
		}
	}
	return out.raw()
}

// readEach runs read for 0..n-1, a few at a time; the first error stops it.
func readEach(ctx context.Context, n int, read func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelReads)
	for i := range n {
		g.Go(func() error { return read(ctx, i) })
	}
	return g.Wait()
}

func isStatus(err error, status int) bool {
	var he *adapters.HTTPError
	return errors.As(err, &he) && he.Status == status
}

// snippet is the service's preview text, which comes HTML-escaped.
func snippet(s string) string {
	return clipText(html.UnescapeString(s), snippetRunes)
}

package gmail_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/gmail"
	"github.com/guilds/guilds/internal/connectors"
)

func conn(f *fakeService, token string) adapters.Conn {
	return adapters.Conn{HTTP: f.Client(), BaseURL: f.api(), Cred: connectors.Credential{AccessToken: token}}
}

// call runs a tool with the good token; neither its answer nor its error
// may hold the token.
func call(t *testing.T, f *fakeService, tool, args string) (string, error) {
	t.Helper()
	out, err := gmail.Adapter{}.Call(context.Background(), conn(f, goodToken), tool, json.RawMessage(args))
	if strings.Contains(out, goodToken) || (err != nil && strings.Contains(err.Error(), goodToken)) {
		t.Fatalf("%s: the token leaked: %q %v", tool, out, err)
	}
	return out, err
}

func mustCall(t *testing.T, f *fakeService, tool, args string) []string {
	t.Helper()
	out, err := call(t, f, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

func TestRegistered(t *testing.T) {
	if a, ok := adapters.Lookup("gmail"); !ok || a.Name() != gmail.Name {
		t.Fatal("gmail is not registered")
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	f := newService(t)
	ctx := context.Background()
	hint, err := gmail.Adapter{}.Check(ctx, conn(f, goodToken))
	if err != nil || hint != "ada@example.com" {
		t.Fatalf("good token: %q %v", hint, err)
	}
	if got := f.find("/users/me/profile"); len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer "+goodToken {
		t.Fatalf("profile requests: %v", got)
	}
	for _, bad := range []string{"ya29.expired", "scope-too-narrow"} {
		if _, err := (gmail.Adapter{}).Check(ctx, conn(f, bad)); !errors.Is(err, adapters.ErrRejected) {
			t.Fatalf("%s: %v", bad, err)
		}
	}
	_, err = gmail.Adapter{}.Check(ctx, conn(f, "service-down"))
	if err == nil || errors.Is(err, adapters.ErrRejected) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("503: %v", err)
	}
	down := newService(t)
	down.Close()
	_, err = gmail.Adapter{}.Check(ctx, conn(down, goodToken))
	if err == nil || errors.Is(err, adapters.ErrRejected) || strings.Contains(err.Error(), goodToken) {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestSearchThreads(t *testing.T) {
	t.Parallel()
	f := newService(t)
	lines := mustCall(t, f, "search_threads", `{"query":"from:bob has:attachment"}`)
	if lines[0] != "thread\tlast_date\tlast_from\tsubject\tmessages\tsnippet" || len(lines) != 1+adapters.DefaultRows {
		t.Fatalf("default answer: %d lines, header %q", len(lines), lines[0])
	}
	want := threadID(0) + "\t2024-12-10 08:00\tBob 1 <bob0@example.org>\tQuarterly report 0\t2\tIt's thread 0 & more"
	if lines[1] != want {
		t.Fatalf("row:\n got %q\nwant %q", lines[1], want)
	}
	list := f.find("/users/me/threads")[0].URL.Query()
	if list.Get("q") != "from:bob has:attachment" || list.Get("maxResults") != "15" {
		t.Fatalf("list query %v", list)
	}
	meta := f.find("/threads/" + threadID(3))[0].URL.Query()
	if meta.Get("format") != "metadata" || len(meta["metadataHeaders"]) == 0 {
		t.Fatalf("thread read %v", meta)
	}

	if lines := mustCall(t, f, "search_threads", `{"query":"x","limit":3}`); len(lines) != 4 {
		t.Fatalf("limit 3: %d lines", len(lines))
	}
	if lines := mustCall(t, f, "search_threads", `{"query":"x","limit":500}`); len(lines) != 1+adapters.MaxRows {
		t.Fatalf("limit 500: %d lines", len(lines))
	}
	if lines := mustCall(t, f, "search_threads", `{"query":"nothing here"}`); len(lines) != 1 {
		t.Fatalf("no match: %q", lines)
	}
	_, err := call(t, f, "search_threads", `{"query":"ratelimited"}`)
	var he *adapters.HTTPError
	if !errors.As(err, &he) || he.Status != 429 || !strings.Contains(err.Error(), "Too many concurrent requests") {
		t.Fatalf("429: %v", err)
	}
}

func TestGetThread(t *testing.T) {
	t.Parallel()
	f := newService(t)
	lines := mustCall(t, f, "get_thread", `{"id":"`+threadID(7)+`"}`)
	if lines[0] != "message\tdate\tfrom\tto\tsubject\tattachments\tbody" || len(lines) != 3 {
		t.Fatalf("thread: %q", lines)
	}
	first, second := strings.Split(lines[1], "\t"), strings.Split(lines[2], "\t")
	if first[4] != "Quarterly report 7" || first[5] != "report.pdf (52000 B)" || first[6] != "Hello Ada, the figures for 7 are in." {
		t.Fatalf("first message %q", first)
	}
	if second[4] != "Re: Quarterly report 7" || !strings.HasPrefix(second[6], "Thanks, looks good!") || strings.Contains(lines[2], "quoted line") {
		t.Fatalf("reply %q", second)
	}
	if strings.Contains(strings.Join(lines, "\n"), "HTML twin") {
		t.Fatal("the HTML alternative was shown beside the plain text")
	}
	if got := f.find("/threads/" + threadID(7))[0].URL.Query().Get("format"); got != "full" {
		t.Fatalf("format %q", got)
	}
	_, err := call(t, f, "get_thread", `{"id":"18cfffffffffffff"}`)
	if err == nil || !strings.Contains(err.Error(), "thread 18cfffffffffffff was not found") || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing thread: %v", err)
	}
	before := f.count()
	if _, err := call(t, f, "get_thread", `{"id":"../labels"}`); err == nil || f.count() != before {
		t.Fatalf("a path in the id: %v (requests %d→%d)", err, before, f.count())
	}
}

func TestGetMessage(t *testing.T) {
	t.Parallel()
	f := newService(t)
	lines := mustCall(t, f, "get_message", `{"id":"`+messageID(2, 1)+`"}`)
	if lines[0] != "message\tthread\tdate\tfrom\tto\tcc\tsubject\tlabels\tattachments\tbody" || len(lines) != 2 {
		t.Fatalf("message: %q", lines)
	}
	row := strings.Split(lines[1], "\t")
	if row[1] != threadID(2) || row[2] != "2024-12-10 08:00" || row[7] != "INBOX,UNREAD" || !strings.Contains(row[9], "> quoted line") {
		t.Fatalf("row %q", row)
	}

	html := mustCall(t, f, "get_message", `{"id":"`+htmlOnlyID+`"}`)[1]
	body := html[strings.LastIndex(html, "\t")+1:]
	if body != "Big news & more Second line" {
		t.Fatalf("HTML body reduced to %q", body)
	}

	long := mustCall(t, f, "get_message", `{"id":"`+longID+`"}`)[1]
	if !strings.HasSuffix(long, "… [clipped: 4000 of 9000 characters]") || strings.Count(long, "é") != 4000 {
		t.Fatalf("long body: %d runes, ends %q", len([]rune(long)), long[len(long)-60:])
	}
	if latin := mustCall(t, f, "get_message", `{"id":"`+latin1ID+`"}`)[1]; !strings.HasSuffix(latin, "Café crème") {
		t.Fatalf("Latin-1 body %q", latin)
	}
	if _, err := call(t, f, "get_message", `{"id":"aaaaffffffffffff"}`); err == nil || !strings.Contains(err.Error(), "was not found") {
		t.Fatalf("missing message: %v", err)
	}
}

func TestListLabels(t *testing.T) {
	t.Parallel()
	f := newService(t)
	lines := mustCall(t, f, "list_labels", `{}`)
	if lines[0] != "id\tname\ttype" || len(lines) != 1+adapters.DefaultRows {
		t.Fatalf("labels: %q", lines)
	}
	if !strings.HasPrefix(lines[1], "Label_") || !strings.HasSuffix(lines[1], "\tclients/Acme\tuser") || !strings.HasSuffix(lines[4], "\tsystem") {
		t.Fatalf("the account's labels do not come first: %q", lines[:5])
	}
	if strings.Contains(strings.Join(lines, "\n"), "#ffffff") {
		t.Fatal("colours were kept")
	}
	if lines := mustCall(t, f, "list_labels", `{"limit":30}`); len(lines) != 1+17 {
		t.Fatalf("all labels: %d lines", len(lines))
	}
}

func TestListDrafts(t *testing.T) {
	t.Parallel()
	f := newService(t)
	lines := mustCall(t, f, "list_drafts", `{"limit":4}`)
	if lines[0] != "draft\tthread\tdate\tto\tsubject\tsnippet" || len(lines) != 5 {
		t.Fatalf("drafts: %q", lines)
	}
	if want := draftID(0) + "\t" + threadID(100) + "\t2024-12-10 07:00\tAda <ada@example.com>\tQuarterly report 100\tHello Ada, the figures' summary"; lines[1] != want {
		t.Fatalf("row:\n got %q\nwant %q", lines[1], want)
	}
	if got := f.find("/users/me/drafts")[0].URL.Query().Get("maxResults"); got != "4" {
		t.Fatalf("maxResults %q", got)
	}
	if lines := mustCall(t, f, "list_drafts", `{}`); len(lines) != 1+adapters.DefaultRows {
		t.Fatalf("default: %d lines", len(lines))
	}
}

// sentMessage decodes the raw message of the last POST.
func sentMessage(t *testing.T, raw any) (*mail.Message, string) {
	t.Helper()
	b, err := base64.URLEncoding.DecodeString(raw.(string))
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.ReadMessage(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		t.Fatal(err)
	}
	return m, string(body)
}

func TestCreateDraft(t *testing.T) {
	t.Parallel()
	f := newService(t)
	lines := mustCall(t, f, "create_draft", `{"to":["Bob <bob@example.org>","eve@example.org, joe@example.org"],"subject":"Café plans","body":"Line one\nLine two — ok"}`)
	if lines[0] != "draft\tmessage\tthread" || lines[1] != "r-777\t18c9000000000002\t18c9000000000001" {
		t.Fatalf("draft: %q", lines)
	}
	posted := f.lastPost()["message"].(map[string]any)
	if _, ok := posted["threadId"]; ok {
		t.Fatalf("a new draft named a thread: %v", posted)
	}
	m, body := sentMessage(t, posted["raw"])
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if m.Header.Get("To") != `"Bob" <bob@example.org>, <eve@example.org>, <joe@example.org>` || subject != "Café plans" ||
		body != "Line one\r\nLine two — ok" || !strings.HasPrefix(m.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("message: To %q, Subject %q, body %q", m.Header.Get("To"), subject, body)
	}

	lines = mustCall(t, f, "create_draft", `{"to":["bob3@example.org"],"subject":"Re: Quarterly report 3","body":"Agreed.","thread_id":"`+threadID(3)+`"}`)
	if lines[1] != "r-777\t18c9000000000002\t"+threadID(3) {
		t.Fatalf("answer: %q", lines)
	}
	posted = f.lastPost()["message"].(map[string]any)
	m, _ = sentMessage(t, posted["raw"])
	if posted["threadId"] != threadID(3) || m.Header.Get("In-Reply-To") != "<msg-3-1@mail.example.org>" ||
		m.Header.Get("References") != "<msg-3-0@mail.example.org> <msg-3-1@mail.example.org>" {
		t.Fatalf("answer headers: %v %v", posted["threadId"], m.Header)
	}
	if _, err := call(t, f, "create_draft", `{"to":["a@example.org"],"subject":"s","body":"b","thread_id":"18cfffffffffffff"}`); err == nil ||
		!strings.Contains(err.Error(), "not found") {
		t.Fatalf("answer to a missing thread: %v", err)
	}
}

func TestComposeRefusesHeaderInjection(t *testing.T) {
	t.Parallel()
	f := newService(t)
	for name, args := range map[string]string{
		"subject CRLF": `{"to":["a@example.org"],"subject":"Hi\r\nBcc: evil@example.net","body":"b"}`,
		"subject LF":   `{"to":["a@example.org"],"subject":"Hi\nBcc: evil@example.net","body":"b"}`,
		"to LF":        `{"to":["a@example.org\nBcc: evil@example.net"],"subject":"s","body":"b"}`,
		"not address":  `{"to":["nobody"],"subject":"s","body":"b"}`,
		"no recipient": `{"to":[" "],"subject":"s","body":"b"}`,
	} {
		for _, tool := range []string{"create_draft", "send_message"} {
			if _, err := call(t, f, tool, args); err == nil {
				t.Errorf("%s %s: accepted", tool, name)
			}
		}
	}
	if n := len(f.find("/drafts")) + len(f.find("/send")); n != 0 {
		t.Fatalf("%d refused messages reached the service", n)
	}
}

func TestSendMessage(t *testing.T) {
	t.Parallel()
	f := newService(t)
	lines := mustCall(t, f, "send_message", `{"to":["bob@example.org"],"subject":"Hello","body":"Hi Bob"}`)
	if lines[0] != "message\tthread\tlabels" || lines[1] != "18c9000000000003\t18c9000000000001\tSENT" {
		t.Fatalf("send: %q", lines)
	}
	reqs := f.find("/users/me/messages/send")
	if len(reqs) != 1 || reqs[0].Method != http.MethodPost || reqs[0].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("send requests %v", reqs)
	}
	m, body := sentMessage(t, f.lastPost()["raw"])
	if m.Header.Get("To") != "<bob@example.org>" || m.Header.Get("Subject") != "Hello" || body != "Hi Bob" {
		t.Fatalf("sent %v %q", m.Header, body)
	}
}

func TestCallErrors(t *testing.T) {
	t.Parallel()
	f := newService(t)
	if _, err := call(t, f, "delete_everything", `{}`); err == nil || !strings.Contains(err.Error(), `"delete_everything"`) {
		t.Fatalf("unknown tool: %v", err)
	}
	if _, err := call(t, f, "get_message", `{"id":7}`); err == nil {
		t.Fatal("a number as id was accepted")
	}
	_, err := gmail.Adapter{}.Call(context.Background(), conn(f, "ya29.expired"), "list_labels", nil)
	var he *adapters.HTTPError
	if !errors.As(err, &he) || !he.Refused() || strings.Contains(err.Error(), "ya29.expired") {
		t.Fatalf("refused token: %v", err)
	}
}

package mcppool_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testproc"
	"github.com/guilds/guilds/internal/tools"
)

// everythingHTTP starts server-everything over Streamable HTTP and returns
// its endpoint once it says it listens.
func everythingHTTP(t *testing.T) string {
	t.Helper()
	node, js := everything(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cmd := exec.Command(node, js, "streamableHttp") //nolint:gosec // G204: the pinned package's entry point
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	testproc.Start(t, cmd, "listening on ")
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// followResearch calls simulate-research-query with an ambiguous topic,
// which the server runs as a 2025-11-25 task whose clarification form it
// sends only on a tasks/result stream, and polls the task to its end at the
// intervals the run workflow keeps. It returns the result and the forms
// answered.
func followResearch(ctx context.Context, p *mcppool.Pool, id, topic string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a failure bound: the task takes four stages of a second
	defer cancel()
	hctx, handed := tools.WithTaskHandOver(ctx)
	if _, err := p.CallParts(hctx, id, "simulate-research-query", []byte(`{"topic":"`+topic+`","ambiguous":true}`)); err != nil {
		return "", 0, err
	}
	task := handed()
	if task == nil {
		return "", 0, errors.New("the research call was not handed over as a task")
	}
	answered, every, began := 0, task.PollEvery, time.Now()
	for {
		select {
		case <-ctx.Done():
			return "", answered, fmt.Errorf("the task did not end: %w", ctx.Err())
		case <-time.After(tools.TaskPollInterval(every, time.Since(began))): // the server's own pace
		}
		st, err := p.PollTask(ctx, id, task.TaskID)
		if err != nil {
			return "", answered, err
		}
		answered += st.Answered
		if out, done := st.Outcome(); done {
			return tools.JoinParts(out, nil), answered, nil
		}
		every = st.PollEvery
	}
}

// A published server's task that waits for input, the 2025-11-25 way: the
// poll opens the tasks/result stream, the form arriving there is answered
// as the row says (declined by default, or put before a person), and the
// task goes on to the report the answer shaped.
func TestPublishedTaskInputAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node")
	}
	url := everythingHTTP(t)
	db := testdb.New(t)
	ctx := context.Background()
	newPool := func(slug, config string) (*mcppool.Pool, string) {
		id := addConnection(t, db, slug, url, "none", config)
		p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
		t.Cleanup(p.Close)
		return p, id
	}

	t.Run("declined by default", func(t *testing.T) {
		p, id := newPool("everything-decline", `{}`)
		got, answered, err := followResearch(ctx, p, id, "tides")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"# Research Report: tides (User declined - using default interpretation)",
			"`input_required` → `working` → `completed`"} {
			if !strings.Contains(got, want) {
				t.Errorf("the report lacks %q:\n%s", want, got)
			}
		}
		if answered != 1 {
			t.Errorf("%d forms answered, want 1", answered)
		}
	})

	t.Run("answered by a person", func(t *testing.T) {
		p, id := newPool("everything-person", `{"elicitation":"person","input_wait_seconds":120}`)
		asker, asked := asking(db, runPlace(t, db))
		type followed struct {
			out      string
			answered int
			err      error
		}
		done := make(chan followed, 1)
		go func() {
			out, n, err := followResearch(inputs.WithAsker(ctx, asker), p, id, "python")
			done <- followed{out, n, err}
		}()
		r := answer(t, db, asked, inputs.Answer{Action: inputs.ActionAccept, Content: map[string]any{"interpretation": "snake"}})
		if !strings.Contains(r.Message, `"python" could have multiple interpretations`) || !strings.Contains(string(r.Schema), `"snake"`) {
			t.Errorf("the inbox shows %q, schema %s", r.Message, r.Schema)
		}
		got := <-done
		if got.err != nil {
			t.Fatal(got.err)
		}
		if !strings.Contains(got.out, "# Research Report: python (snake)") || !strings.Contains(got.out, "- **Clarification**: snake") {
			t.Errorf("the report does not carry the answer:\n%s", got.out)
		}
		if got.answered != 1 {
			t.Errorf("%d forms answered, want 1", got.answered)
		}
	})

	t.Run("nobody answers in the row's wait", func(t *testing.T) {
		p, id := newPool("everything-late", `{"elicitation":"person","input_wait_seconds":1}`)
		asker, asked := asking(db, runPlace(t, db))
		got, _, err := followResearch(inputs.WithAsker(ctx, asker), p, id, "tides")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "# Research Report: tides (User declined - using default interpretation)") {
			t.Errorf("the report after the wait:\n%s", got)
		}
		select {
		case r := <-asked:
			if r, err := inputs.Get(ctx, db, r.ID, nil); err != nil || r.State != inputs.StateExpired {
				t.Errorf("the unanswered form is %q, %v; want expired", r.State, err)
			}
		default:
			t.Error("the form never reached the inbox")
		}
	})
}

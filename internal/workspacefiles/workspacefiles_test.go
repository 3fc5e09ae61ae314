package workspacefiles_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/workspacefiles"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/dockertest"
)

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"invoices/a.pdf":               "/home/agent/invoices/a.pdf",
		"/home/agent/x/../a.pdf":       "/home/agent/a.pdf",
		"  ./a.pdf ":                   "/home/agent/a.pdf",
		"":                             "ERROR file_path: is required",
		"/etc/passwd":                  `ERROR file_path: "/etc/passwd" is outside the workspace`,
		"../etc/passwd":                "is outside the workspace",
		"/home/agent":                  "is outside the workspace",
		"/home/agentx/a.pdf":           "is outside the workspace",
		"/home/agent/../../etc/passwd": "is outside the workspace",
		"a\x00.pdf":                    "control characters",
	} {
		got, err := workspacefiles.Clean("file_path", in)
		if err != nil {
			got = "ERROR " + err.Error()
		}
		if !strings.Contains(got, want) {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDetectByContent(t *testing.T) {
	for want, content := range map[string]string{
		"application/pdf": "%PDF-1.7\n...",
		"image/png":       "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"image/jpeg":      "\xff\xd8\xff\xe0\x00\x10JFIF",
		"text/plain":      "just text, named invoice.pdf",
	} {
		if got := workspacefiles.Detect([]byte(content)); got != want {
			t.Errorf("Detect(%q) = %s, want %s", content[:4], got, want)
		}
	}
}

// On the real sandbox image: links are resolved in the container.
func TestRulesOnTheSandboxImage(t *testing.T) {
	drv, cli := dockertest.Driver(t)
	image := dockertest.AgentImage(t, cli)
	mgr := workspaces.New(drv, workspaces.Options{Image: image, Logger: slog.New(slog.DiscardHandler)})
	agent := "wsfiles-" + strings.ReplaceAll(t.Name(), "/", "-")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = mgr.RemoveHome(ctx, agent)
		_ = mgr.Close(ctx)
	})
	ctx := context.Background()
	sh := func(cmd string) {
		t.Helper()
		res, err := mgr.Exec(ctx, agent, sandbox.ExecRequest{Cmd: []string{"bash", "-c", cmd}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: %v %s", cmd, err, res.Stderr)
		}
	}
	sh(`mkdir -p ~/inv && printf '%%PDF-1.4\nbody' > ~/inv/real.png && printf 'not a pdf' > ~/inv/fake.pdf &&
		ln -s /etc/passwd ~/inv/passwd.pdf && ln -s real.png ~/inv/link.pdf && ln -s /tmp ~/out && printf '%%%%PDF-1.4' > /tmp/x.pdf && mkfifo ~/inv/pipe.pdf &&
		head -c 3000 /dev/zero | tr '\0' 'x' | sed '1s/^/%PDF-/' > ~/inv/big.pdf`)
	pdf := []string{"application/pdf", "image/png", "image/jpeg"}
	f, err := workspacefiles.Read(ctx, mgr, agent, "path", "inv/real.png", 0, pdf...)
	if err != nil || f.Type != "application/pdf" || f.Path != "/home/agent/inv/real.png" || string(f.Content) != "%PDF-1.4\nbody" {
		t.Fatalf("read by content: %+v %v", f, err)
	}
	// A link inside the workspace is followed, to where it leads.
	if f, err := workspacefiles.Read(ctx, mgr, agent, "path", "/home/agent/inv/link.pdf", 0, pdf...); err != nil || f.Path != "/home/agent/inv/real.png" {
		t.Fatalf("link inside: %+v %v", f, err)
	}
	for p, want := range map[string]string{
		"inv/passwd.pdf":  "path: /home/agent/inv/passwd.pdf leads outside the workspace (a link to /etc/passwd)",
		"inv/fake.pdf":    "path: /home/agent/inv/fake.pdf holds text/plain, judged by its content",
		"inv/missing.pdf": "path: /home/agent/inv/missing.pdf does not exist",
		"inv/pipe.pdf":    "is not a regular file",
		"out/x.pdf":       "leads outside the workspace",
		"/etc/hostname":   "outside the workspace",
		"inv":             "is not a regular file",
	} {
		_, err := workspacefiles.Read(ctx, mgr, agent, "path", p, 0, pdf...)
		var fe *workspacefiles.FieldError
		if !errors.As(err, &fe) || fe.Field != "path" || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%s): %v, want a path refusal with %q", p, err, want)
		}
	}
	if _, err := workspacefiles.Read(ctx, mgr, agent, "path", "inv/big.pdf", 2048, pdf...); err == nil || !strings.Contains(err.Error(), "at most 2048") {
		t.Errorf("size limit: %v", err)
	}
	// Writes: folders made, links outside refused, nothing written there.
	if got, err := workspacefiles.Write(ctx, mgr, agent, "file_path", "docs/new/a.txt", []byte("hi"), 0); err != nil || got != "/home/agent/docs/new/a.txt" {
		t.Fatalf("write: %s %v", got, err)
	}
	if _, err := workspacefiles.Write(ctx, mgr, agent, "file_path", "out/evil.txt", []byte("x"), 0); err == nil || !strings.Contains(err.Error(), "leads outside the workspace") {
		t.Fatalf("write through a link: %v", err)
	}
	if _, err := mgr.CopyFrom(ctx, agent, "/tmp/evil.txt"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("the refused write reached /tmp: %v", err)
	}
	if _, err := workspacefiles.Write(ctx, mgr, agent, "file_path", "a.txt", make([]byte, 11), 10); err == nil || !strings.Contains(err.Error(), "at most 10") {
		t.Fatalf("write limit: %v", err)
	}
}

// A call's workspace is the one its context names, never another call's:
// nothing is kept for the process.
func TestFromNeedsAWorkspaceAndAnAgent(t *testing.T) {
	var a, b sandboxWorkspace
	ctxA := workspacefiles.With(context.Background(), &a, "agent-a")
	ctxB := workspacefiles.With(context.Background(), &b, "agent-b")
	for name, ctx := range map[string]context.Context{
		"no call":      context.Background(),
		"no workspace": workspacefiles.With(context.Background(), nil, "agent-a"),
		"no agent":     workspacefiles.With(context.Background(), &a, ""),
	} {
		if _, _, err := workspacefiles.From(ctx); !errors.Is(err, sandbox.ErrNoWorkspace) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if ws, agent, err := workspacefiles.From(ctxA); err != nil || ws != &a || agent != "agent-a" {
		t.Fatalf("call a: %v %s %v", ws, agent, err)
	}
	if ws, agent, err := workspacefiles.From(ctxB); err != nil || ws != &b || agent != "agent-b" {
		t.Fatalf("call b: %v %s %v", ws, agent, err)
	}
}

// sandboxWorkspace stands for a workspace the test never reaches.
type sandboxWorkspace struct{ workspacefiles.Workspace }

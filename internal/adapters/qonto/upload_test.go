package qonto_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/adapters/qonto"
	"github.com/guilds/guilds/internal/adapters/qonto/qontotest"
	"github.com/guilds/guilds/internal/workspacefiles"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// upload_invoice with the agent's workspace on the real sandbox image and
// the fake Qonto: the file is read through the sandbox file API under the
// workspace file rules, sent as multipart, and the call waits for the
// background processing.
func TestUploadInvoiceFromTheWorkspace(t *testing.T) {
	drv, cli := dockertest.Driver(t)
	image := dockertest.AgentImage(t, cli)
	mgr := workspaces.New(drv, workspaces.Options{Image: image, Logger: slog.New(slog.DiscardHandler)})
	agent := fmt.Sprintf("qonto-upload-agent-%d", os.Getpid()) // its own home beside a concurrent test run
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = mgr.RemoveHome(ctx, agent)
		_ = mgr.Close(ctx)
	})
	ctx := workspacefiles.With(context.Background(), mgr, agent)
	pdf := []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
	for p, content := range map[string][]byte{
		"/home/agent/invoices/adobe.pdf":  pdf,
		"/home/agent/invoices/scan.jpg":   png, // named .jpg, holds a PNG
		"/home/agent/invoices/notes.pdf":  []byte("just some text"),
		"/home/agent/invoices/huge.pdf":   append(append([]byte{}, pdf...), bytes.Repeat([]byte{'0'}, qonto.MaxInvoice)...),
		"/home/agent/invoices/second.pdf": append([]byte("%PDF-1.4\n"), 'x'),
	} {
		if err := mgr.CopyTo(ctx, agent, p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := mgr.Exec(ctx, agent, sandbox.ExecRequest{Cmd: []string{"ln", "-s", "/etc/passwd", "/home/agent/invoices/passwd.pdf"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("ln: %v %s", err, res.Stderr)
	}

	f := fixture{svc: qontotest.New(t), a: &qonto.Adapter{Now: func() time.Time { return clock }, Poll: 20 * time.Millisecond, Wait: 2 * time.Second}}
	call := func(args string) (string, error) {
		t.Helper()
		out, err := f.a.Call(ctx, f.conn(goodKey), "upload_invoice", json.RawMessage(args))
		noKey(t, out, err)
		return out, err
	}
	tx := txID(1, 0)
	out, err := call(`{"transaction_id":"` + tx + `","path":"invoices/adobe.pdf"}`)
	if err != nil {
		t.Fatal(err)
	}
	rows := lines(out)
	if len(rows) != 2 || rows[0] != "status\ttransaction_id\tattachment_id\tfile_name\tfile_size\tcontent_type\twaited_s" ||
		!strings.HasPrefix(rows[1], "attached\t"+tx+"\taa000000-0000-4000-8000-000000000001\tadobe.pdf\t"+strconv.Itoa(len(pdf))+"\tapplication/pdf\t") {
		t.Fatalf("upload: %q", out)
	}
	up := f.svc.Uploads()[0]
	if up.FileName != "adobe.pdf" || up.PartType != "application/pdf" || !bytes.Equal(up.Content, pdf) || len(up.Key) != 36 {
		t.Fatalf("sent %+v", up)
	}
	// The same file again makes the same idempotency key: Qonto keeps one.
	if out, err := call(`{"transaction_id":"` + tx + `","path":"/home/agent/invoices/adobe.pdf"}`); err != nil || !strings.HasPrefix(lines(out)[1], "processing\t") {
		t.Fatalf("repeat: %q %v", out, err)
	}
	if ups := f.svc.Uploads(); len(ups) != 2 || ups[1].Key != up.Key || f.svc.Attached(tx) != 1 {
		t.Errorf("a repeated upload made another attachment: %d uploads", len(ups))
	}

	// Type by content, not by name.
	if out, err := call(`{"transaction_id":"` + tx + `","path":"invoices/scan.jpg"}`); err != nil || !strings.Contains(out, "\tscan.jpg\t") || !strings.Contains(out, "\timage/png\t") {
		t.Fatalf("png named .jpg: %q %v", out, err)
	}

	// Refusals: nothing reaches Qonto.
	n := f.svc.Count()
	for args, want := range map[string]string{
		`{"transaction_id":"` + tx + `","path":"/etc/passwd"}`:             `upload_invoice: path: "/etc/passwd" is outside the workspace`,
		`{"transaction_id":"` + tx + `","path":"../../etc/passwd"}`:        "is outside the workspace",
		`{"transaction_id":"` + tx + `","path":"invoices/passwd.pdf"}`:     "leads outside the workspace (a link to /etc/passwd)",
		`{"transaction_id":"` + tx + `","path":"invoices/notes.pdf"}`:      "holds text/plain, judged by its content; only application/pdf, image/jpeg, image/png are accepted",
		`{"transaction_id":"` + tx + `","path":"invoices/missing.pdf"}`:    "does not exist in the workspace",
		`{"transaction_id":"` + tx + `","path":"invoices/huge.pdf"}`:       "at most 15000000",
		`{"transaction_id":"` + tx + `","path":"invoices"}`:                "not a regular file",
		`{"transaction_id":"../organization","path":"invoices/adobe.pdf"}`: "transaction_id",
	} {
		if out, err := call(args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q %v, want %q", args, out, err, want)
		}
	}
	if got := f.svc.Count(); got != n {
		t.Fatalf("refused uploads sent %d requests", got-n)
	}
	// An unknown transaction is named before the file is sent.
	if _, err := call(`{"transaction_id":"` + txID(9, 9) + `","path":"invoices/adobe.pdf"}`); err == nil || !strings.Contains(err.Error(), "has no transaction") {
		t.Fatalf("unknown transaction: %v", err)
	}

	// Processing that takes longer than the pool's default 30 s is waited
	// for (up to a minute): the call's bound is the tool's own, as the pool
	// gives it; the fake clock moves one poll per look.
	long := txID(1, 11)
	f.svc.Slow(long, 21) // 20 polls of 2 s: 40 s
	slowClock := &stepClock{now: clock}
	patient := &qonto.Adapter{Clock: slowClock}
	limit := adapters.CallTimeout(patient, "upload_invoice", host.Timeout, host.MaxTimeout)
	pctx, cancel := context.WithTimeout(ctx, limit)
	out, err = patient.Call(pctx, f.conn(goodKey), "upload_invoice", json.RawMessage(`{"transaction_id":"`+long+`","path":"invoices/scan.jpg"}`))
	cancel()
	if err != nil || !strings.HasPrefix(lines(out)[1], "attached\t"+long+"\t") || !strings.HasSuffix(lines(out)[1], "\t40") {
		t.Fatalf("processing for 40 s: %q %v (bound %s)", out, err, limit)
	}

	// Processing that does not finish in time is reported, not failed.
	slow := txID(1, 10)
	f.svc.Never(slow)
	f.a.Wait = 200 * time.Millisecond
	out, err = call(`{"transaction_id":"` + slow + `","path":"invoices/second.pdf"}`)
	if err != nil || !strings.HasPrefix(lines(out)[1], "processing\t"+slow+"\t\tsecond.pdf\t10\tapplication/pdf\t") ||
		!strings.Contains(out, "had not finished processing it") || !strings.Contains(out, "Do not upload it again") {
		t.Fatalf("slow processing: %q %v", out, err)
	}
}

// stepClock is upload_invoice's clock in a test: every wait returns at once
// and moves the clock by its length.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	t := c.now
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- t
	return ch
}

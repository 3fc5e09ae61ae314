package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

const echoSchema = `{"type":"object","required":["text"],"additionalProperties":false,
 "properties":{"text":{"type":"string","minLength":1},"times":{"type":"integer","minimum":1,"maximum":3}}}`

func newTestRegistry(t *testing.T) (*Registry, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	r := NewRegistry(WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	r.Register(Tool{
		Name: "echo", Description: "Echo text.", Schema: json.RawMessage(echoSchema),
		Handler: func(_ context.Context, c Call) (string, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(c.Args, &a)
			return a.Text, nil
		},
	})
	r.Register(Tool{
		Name: "fail", Schema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, Call) (string, error) {
			return "", errors.New("upstream said no")
		},
	})
	r.Register(Tool{
		Name: "boom", Schema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, Call) (string, error) {
			panic("internal detail xyz")
		},
	})
	r.Register(Tool{
		Name: "slow", Schema: json.RawMessage(`{}`), Class: ClassBrowser,
		Handler: func(ctx context.Context, _ Call) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		},
	})
	return r, &logs
}

func TestInvoke(t *testing.T) {
	r, logs := newTestRegistry(t)
	ctx := context.Background()
	cancelled, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	tests := []struct {
		name, tool, args string
		ctx              context.Context
		want             string
		wantPrefix       bool
	}{
		{"ok", "echo", `{"text":"hi"}`, ctx, "hi", false},
		{"unknown tool", "nope", `{}`, ctx, `ERROR: unknown tool "nope"`, true},
		{"every problem at once", "echo", `{"times":9,"extra":1}`, ctx,
			"ERROR: invalid arguments: at (root): additional properties 'extra' not allowed; at (root): missing property 'text'; at /times: maximum: got 9, want 3", false},
		{"not json", "echo", `{"text":`, ctx, "ERROR: invalid arguments: arguments are not valid JSON", false},
		{"empty args are an empty object", "fail", ``, ctx, "ERROR: upstream said no", false},
		{"handler error", "fail", `null`, ctx, "ERROR: upstream said no", false},
		{"panic", "boom", `{}`, ctx, "ERROR: " + errPanicked.Error(), false},
		{"timeout", "slow", `{}`, cancelled, "ERROR: the tool timed out", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Invoke(tt.ctx, Call{Name: tt.tool, Args: json.RawMessage(tt.args), RunID: "run-1"})
			if tt.wantPrefix {
				if !strings.HasPrefix(got, tt.want) {
					t.Fatalf("got %q, want prefix %q", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if strings.Contains(r.Invoke(ctx, Call{Name: "boom"}), "xyz") {
		t.Fatal("panic detail reached the result")
	}
	if !strings.Contains(logs.String(), "internal detail xyz") || !strings.Contains(logs.String(), "stack=") {
		t.Fatalf("panic detail and stack not logged: %s", logs.String())
	}
	if !strings.Contains(logs.String(), "run_id=run-1") {
		t.Fatalf("run id not logged: %s", logs.String())
	}
}

func TestRegisterPanics(t *testing.T) {
	h := func(context.Context, Call) (string, error) { return "", nil }
	obj := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name string
		tool Tool
	}{
		{"empty name", Tool{Schema: obj, Handler: h}},
		{"bad name", Tool{Name: "a b", Schema: obj, Handler: h}},
		{"nil handler", Tool{Name: "x", Schema: obj}},
		{"invalid schema", Tool{Name: "x", Schema: json.RawMessage(`{"type":"strin"}`), Handler: h}},
		{"not json", Tool{Name: "x", Schema: json.RawMessage(`{`), Handler: h}},
		{"not an object schema", Tool{Name: "x", Schema: json.RawMessage(`{"type":"string"}`), Handler: h}},
		{"unknown class", Tool{Name: "x", Schema: obj, Handler: h, Class: "gpu"}},
		{"duplicate", Tool{Name: "dup", Schema: obj, Handler: h}},
	}
	r := NewRegistry()
	r.Register(Tool{Name: "dup", Schema: obj, Handler: h})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("Register did not panic")
				}
			}()
			r.Register(tt.tool)
		})
	}
}

func TestLookupAllOffers(t *testing.T) {
	r, _ := newTestRegistry(t)
	var names []string
	for _, tl := range r.All() {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "boom,echo,fail,slow" {
		t.Fatalf("All() order = %s", got)
	}
	tl, ok := r.Lookup("slow")
	if !ok || tl.Class != ClassBrowser {
		t.Fatalf("Lookup(slow) = %+v, %v", tl, ok)
	}
	if tl, _ := r.Lookup("echo"); tl.Class != ClassDefault {
		t.Fatalf("empty class not defaulted: %q", tl.Class)
	}
	if _, ok := r.Lookup("missing"); ok {
		t.Fatal("Lookup(missing) found a tool")
	}
	offers := r.Offers("echo", "missing")
	if len(offers) != 1 || offers[0].Validator == nil {
		t.Fatalf("Offers = %+v", offers)
	}
	if strings.Contains(string(offers[0].Shaped), "additionalProperties") {
		t.Fatalf("shaped schema kept additionalProperties: %s", offers[0].Shaped)
	}
	if !strings.Contains(string(offers[0].Schema), "additionalProperties") {
		t.Fatal("original schema lost additionalProperties")
	}
	if len(r.Offers()) != 4 {
		t.Fatal("Offers() without names should list every tool")
	}
}

func TestRefuseUnknown(t *testing.T) {
	got := RefuseUnknown(strings.Repeat("é", 100))
	if !strings.HasPrefix(got, `ERROR: unknown tool "`) || len(got) > 250 {
		t.Fatalf("RefuseUnknown = %q", got)
	}
	if got := RefuseUnknown(`a"b`); !strings.Contains(got, `"a\"b"`) {
		t.Fatalf("name not quoted: %q", got)
	}
}

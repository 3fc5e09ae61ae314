package codegraph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goRepo writes a Go module of the given files and returns an Env on it.
func goRepo(t *testing.T, files map[string]string) *Env {
	t.Helper()
	home := t.TempDir()
	root := filepath.Join(home, "repos", "m")
	files["go.mod"] = "module example.com/m\n"
	for rel, src := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &Env{Home: home, Cwd: root}
}

// wantCallers checks that code_callers of symbol lists each caller in
// want, unflagged, and none in not.
func wantCallers(t *testing.T, env *Env, symbol string, want, not []string) {
	t.Helper()
	r := call(t, Callers, env, CallersArgs{Symbol: symbol})
	for _, w := range want {
		found := false
		for _, line := range strings.Split(r.Text, "\n") {
			if strings.Contains(line, "← "+w+" ") {
				found = true
				if strings.Contains(line, "guess") {
					t.Errorf("%s: %s is flagged a guess:\n%s", symbol, w, r.Text)
				}
			}
		}
		if !found {
			t.Errorf("%s: want caller %s in\n%s", symbol, w, r.Text)
		}
	}
	for _, n := range not {
		if strings.Contains(r.Text, "← "+n+" ") {
			t.Errorf("%s: %s is no caller, in\n%s", symbol, n, r.Text)
		}
	}
}

// A method promoted from an embedded type, a struct or an interface, in
// the same package or another of the module.
func TestPromotedMethods(t *testing.T) {
	env := goRepo(t, map[string]string{
		"base/base.go": `package base

type Base struct{}

func (b *Base) Reset() {}

type Closer interface {
	Shut() error
}
`,
		"app/app.go": `package app

import "example.com/m/base"

type inner struct{}

func (inner) Ping() {}

type Server struct {
	*base.Base
	inner
	name string
}

type Res interface {
	base.Closer
	Name() string
}

type Other struct{}

func (Other) Reset() {}
func (Other) Ping()  {}

func Run(s *Server, r Res) {
	s.Reset()
	s.Ping()
	_ = r.Shut()
}
`,
	})
	wantCallers(t, env, "Base.Reset", []string{"Run"}, nil)
	wantCallers(t, env, "inner.Ping", []string{"Run"}, nil)
	wantCallers(t, env, "Closer.Shut", []string{"Run"}, nil)
	wantCallers(t, env, "Other.Reset", nil, []string{"Run"})
	wantCallers(t, env, "Other.Ping", nil, []string{"Run"})
}

// A type with a method of the interface's name but another signature does
// not implement it; one with the same types under other names does.
func TestSatisfactionBySignature(t *testing.T) {
	env := goRepo(t, map[string]string{
		"s.go": `package m

import "context"

type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (int, error)
}

type Conn struct{}

func (c *Conn) Exec(c2 context.Context, q string, a ...any) (n int, err error) { return 0, nil }

type Batch struct{}

func (b *Batch) Exec() error { return nil }

func UseConn(c *Conn) { c.Exec(nil, "") }

func UseBatch(b *Batch) { b.Exec() }

func UseExecer(e Execer) { e.Exec(nil, "") }
`,
	})
	r := call(t, Callers, env, CallersArgs{Symbol: "Execer.Exec"})
	if !strings.Contains(r.Text, "UseConn") || strings.Contains(r.Text, "UseBatch") || !strings.Contains(r.Text, "UseExecer") {
		t.Errorf("Execer.Exec:\n%s", r.Text)
	}
	r = call(t, Callers, env, CallersArgs{Symbol: "Batch.Exec"})
	if strings.Contains(r.Text, "UseExecer") {
		t.Errorf("Batch.Exec:\n%s", r.Text)
	}
}

// Receivers typed by a call's result, a type assertion, a literal, a
// field every struct agrees on, and a wider interface's calls counted for
// the narrower one.
func TestReceiversFromCallsAssertionsAndFields(t *testing.T) {
	env := goRepo(t, map[string]string{
		"p/plan.go": `package p

type Plan interface {
	Encode(v any) ([]byte, error)
}

type intPlan struct{}

func (intPlan) Encode(v any) ([]byte, error) { return nil, nil }

type Codec struct{}

func (Codec) PlanEncode() Plan { return intPlan{} }

func NewCodec() *Codec { return &Codec{} }

type holder struct {
	codec *Codec
}

type Source interface {
	Next() bool
}

type Rows interface {
	Next() bool
	Close()
}
`,
		"p/use.go": `package p

func Chain() { Codec{}.PlanEncode().Encode(1) }

func FromFunc() { NewCodec().PlanEncode() }

func Assert(x any) { x.(*Codec).PlanEncode() }

func Literal() { (&Codec{}).PlanEncode() }

func Field(h *holder) { h.codec.PlanEncode() }

func Loop(r Rows) { r.Next() }
`,
	})
	wantCallers(t, env, "Codec.PlanEncode", []string{"FromFunc", "Assert", "Literal", "Field", "Chain"}, nil)
	wantCallers(t, env, "Plan.Encode", []string{"Chain"}, nil)
	r := call(t, Callers, env, CallersArgs{Symbol: "Source.Next"})
	if !strings.Contains(r.Text, "← Loop ") {
		t.Errorf("Source.Next: want Loop (through the wider Rows) in\n%s", r.Text)
	}
}

// Slice and map elements: s[i].M(), m[k].M(), for _, v := range s { v.M() }.
func TestElementReceivers(t *testing.T) {
	env := goRepo(t, map[string]string{
		"e.go": `package m

type Item struct{}

func (*Item) Touch() {}

type Other struct{}

func (Other) Touch() {}

func Index(s []*Item) { s[0].Touch() }

func Map(m map[string]Item) { m["a"].Touch() }

func Range(s []*Item) {
	for _, v := range s {
		v.Touch()
	}
}

func Literal() {
	items := []Item{{}}
	for i, v := range items {
		_ = i
		v.Touch()
	}
}
`,
	})
	wantCallers(t, env, "Item.Touch", []string{"Index", "Map", "Range", "Literal"}, nil)
	wantCallers(t, env, "Other.Touch", nil, []string{"Index", "Map", "Range", "Literal"})
}

// A type satisfies an interface through promoted methods, and an
// interface's embedded interfaces count in what it asks for.
func TestSatisfactionThroughEmbedding(t *testing.T) {
	env := goRepo(t, map[string]string{
		"r.go": `package m

type IRoutes interface {
	Use(h ...int) IRoutes
	GET(path string) IRoutes
}

type IRouter interface {
	IRoutes
	Group(path string) *Group
}

type Group struct{}

func (g *Group) Use(h ...int) IRoutes { return g }
func (g *Group) GET(path string) IRoutes { return g }
func (g *Group) Group(path string) *Group { return g }

type Engine struct {
	Group
}

func (e *Engine) Use(h ...int) IRoutes { return e }

func Setup(e *Engine) { e.Use(1) }
`,
	})
	r := call(t, Callers, env, CallersArgs{Symbol: "IRoutes.Use"})
	if !strings.Contains(r.Text, "← Setup ") {
		t.Errorf("IRoutes.Use: want Setup (Engine satisfies IRoutes through Group) in\n%s", r.Text)
	}
}

package codegraph

import (
	"strings"
	"testing"
)

// The shared fixture: a Plan interface with two implementations, and
// the functions that return plans.
const planPkg = `package plan

type Plan interface {
	Run(src []byte) error
}

type Codec struct{}

func (Codec) PlanFor(kind int) Plan { return fast{} }

func (Codec) Pair() (int, Plan) { return 0, fast{} }

type Map struct{}

func (m *Map) Codec() Codec { return Codec{} }

type fast struct{}

func (fast) Run(src []byte) error { return nil }

type slow struct{}

func (slow) Run(src []byte) error { return nil }

func Split() (Codec, Plan, error) { return Codec{}, slow{}, nil }

func (c Codec) Use() {}
`

// x := T{}.M(), x := pkg.T{}.M() and T{}.M().N(): the receiver a
// composite literal, in the same package and from another.
func TestLiteralReceivers(t *testing.T) {
	env := goRepo(t, map[string]string{
		"plan/plan.go": planPkg,
		"plan/same.go": `package plan

func Same() error {
	p := Codec{}.PlanFor(1)
	return p.Run(nil)
}

func Chained() error { return (Codec{}).PlanFor(2).Run(nil) }
`,
		"app/app.go": `package app

import "example.com/m/plan"

func Other() error {
	p := plan.Codec{}.PlanFor(1)
	return p.Run(nil)
}

func Chain() error { return plan.Codec{}.PlanFor(2).Run(nil) }
`,
	})
	wantCallers(t, env, "fast.Run", []string{"Same", "Chained", "Other", "Chain"}, nil)
}

// x := v.F().M(): the receiver itself the result of a call.
func TestCallReceivers(t *testing.T) {
	env := goRepo(t, map[string]string{
		"plan/plan.go": planPkg,
		"app/app.go": `package app

import "example.com/m/plan"

func Run(m *plan.Map) error {
	p := m.Codec().PlanFor(1)
	return p.Run(nil)
}
`,
	})
	wantCallers(t, env, "slow.Run", []string{"Run"}, nil)
}

// a, b := f(): b takes the second result of f's signature.
func TestMultiValueResults(t *testing.T) {
	env := goRepo(t, map[string]string{
		"plan/plan.go": planPkg,
		"app/app.go": `package app

import "example.com/m/plan"

func Second(c plan.Codec) error {
	_, p := c.Pair()
	return p.Run(nil)
}

func Third() error {
	c, p, err := plan.Split()
	if err != nil {
		return err
	}
	c.Use()
	return p.Run(nil)
}
`,
	})
	wantCallers(t, env, "fast.Run", []string{"Second", "Third"}, nil)
	wantCallers(t, env, "Codec.Use", []string{"Third"}, nil)
}

// a.s[i].M() with s a slice field of a's type; V.M() with V a package
// variable declared in another file of the folder; a.f.M() with f a
// field of an anonymous struct of the same function.
func TestFieldsAndPackageVars(t *testing.T) {
	env := goRepo(t, map[string]string{
		"plan/plan.go": planPkg,
		"plan/rows.go": `package plan

type rows struct {
	plans []Plan
}

func (r *rows) Scan(i int) error { return r.plans[i].Run(nil) }
`,
		"plan/vars.go": `package plan

var (
	Default Plan = fast{}
	Other   Plan = slow{}
)
`,
		"plan/use.go": `package plan

func UseDefault() error { return Default.Run(nil) }

func Table() {
	cases := []struct {
		name string
		p    Plan
	}{{"fast", fast{}}}
	for _, c := range cases {
		_ = c.p.Run(nil)
	}
}
`,
	})
	wantCallers(t, env, "fast.Run", []string{"rows.Scan", "UseDefault", "Table"}, nil)
}

// f := x.M; f(): a method value is a reference to M on x's type.
func TestMethodValues(t *testing.T) {
	env := goRepo(t, map[string]string{
		"plan/plan.go": planPkg,
		"app/app.go": `package app

import "example.com/m/plan"

func Value(m *plan.Map) {
	c := m.Codec()
	use := c.Use
	use()
}
`,
	})
	wantCallers(t, env, "Codec.Use", []string{"Value"}, nil)
}

func TestReceiverExpr(t *testing.T) {
	for in, want := range map[string]string{
		"Codec{}":                   "Codec{}",
		"pgtype.UUIDCodec{}":        "UUIDCodec{}",
		"(&T{a: 1})":                "T{}",
		"conn.TypeMap()":            "conn.TypeMap()",
		"NewMap(a, b)":              "NewMap()",
		"a.b.C()":                   "",
		"x.(T)":                     "",
		"[]int{1}":                  "",
		"func() int { return 1 }()": "",
	} {
		if got := receiverExpr(in); got != want {
			t.Errorf("receiverExpr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGoResult(t *testing.T) {
	sig := "func (c *Conn) Split(a int) (n, m int, p pgtype.Plan, err error)"
	for nth, want := range []string{"int", "int", "pgtype.Plan", "error", ""} {
		if got := goResult(sig, nth); got != want {
			t.Errorf("goResult(%d) = %q, want %q", nth, got, want)
		}
	}
	if got := goResult("func F() *Conn", 0); got != "*Conn" {
		t.Errorf("single result: %q", got)
	}
	if got := goResult("func F() *Conn", 1); got != "" {
		t.Errorf("no second result: %q", got)
	}
}

// x := new(T) is a T; a receiver typed by a signature as a predeclared
// type (err from a call returning error) calls none of the repository's
// methods, so the guess onto them is dropped.
func TestNewAndPredeclared(t *testing.T) {
	env := goRepo(t, map[string]string{
		"plan/plan.go": planPkg,
		"plan/err.go": `package plan

type Failure struct{}

func (Failure) Error() string { return "" }

type Builder struct{}

func (b *Builder) String() string { return "" }

func Check(p Plan) string {
	err := p.Run(nil)
	return err.Error()
}

func Build() string {
	b := new(Builder)
	return b.String()
}
`,
	})
	wantCallers(t, env, "Builder.String", []string{"Build"}, nil)
	// err.Error() stays a guess onto the error types of the caller's
	// package and the ones it imports, and none elsewhere.
	r := call(t, Callers, env, CallersArgs{Symbol: "Failure.Error"})
	if !strings.Contains(r.Text, "← Check ") || !strings.Contains(r.Text, "guess") {
		t.Errorf("Failure.Error: want Check flagged a guess in\n%s", r.Text)
	}
	env = goRepo(t, map[string]string{
		"plan/plan.go": planPkg,
		"fail/fail.go": "package fail\n\ntype Failure struct{}\n\nfunc (Failure) Error() string { return \"\" }\n",
		"app/app.go":   "package app\n\nimport \"example.com/m/plan\"\n\nfunc Check(p plan.Plan) string {\n\terr := p.Run(nil)\n\treturn err.Error()\n}\n",
	})
	wantCallers(t, env, "Failure.Error", nil, []string{"Check"})
}

// The receiver's package decides between two types of one name: c :=
// pool.Acquire() then c.Query() is pool's Conn.Query, not the root's.
func TestReceiverHome(t *testing.T) {
	env := goRepo(t, map[string]string{
		"conn.go": `package m

type Rows interface{ Next() bool }

type Conn struct{}

func (c *Conn) Query() (Rows, error) { return nil, nil }

func connect() *Conn { return &Conn{} }

func Use() {
	c := connect()
	rows, _ := c.Query()
	rows.Next()
}
`,
		"pool/pool.go": `package pool

import "example.com/m"

type Conn struct{}

func (c *Conn) Query() (m.Rows, error) { return nil, nil }
`,
		"rows.go": `package m

type rows struct{}

func (rows) Next() bool { return false }
`,
	})
	wantCallers(t, env, "Rows.Next", []string{"Use"}, nil)
}

// A local's result position survives the store beside its guess flag.
func TestLocalResultStored(t *testing.T) {
	in := []Local{{Def: 0, Name: "p", Type: "Pair", Pkg: "c", Guess: true, Nth: 1},
		{Def: -1, Name: "x", Type: "T"}, {Def: 0, Name: "err", Type: "Split", Guess: true, Nth: 2}}
	packed, err := packLocals(in)
	if err != nil {
		t.Fatal(err)
	}
	out := unpackLocals(packed, 1)
	if len(out) != len(in) {
		t.Fatalf("got %d locals, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i] != in[i] {
			t.Errorf("local %d: got %+v, want %+v", i, out[i], in[i])
		}
	}
}

package codegraph

import (
	"strings"
	"testing"
)

// The Python and TypeScript resolution rules issue 37's measure against
// pyright and tsserver led to (docs/adr/0710).
func TestCallEdgesPythonTypeScript(t *testing.T) {
	env, _ := newHome(t, "repos/pyts", "pyts")
	cases := []struct {
		name, symbol string
		want, not    []string
	}{
		{"self call through the base class", "Base.render", []string{"← Widget.show  py/base.py:8"}, []string{"guess"}},
		{"an import is not a caller", "helper", []string{"← main  py/app.py:15"}, []string{"top level of app.py"}},
		{"a built-in's method name is not guessed", "Cache.get", nil, []string{"helper"}},
		{"an attribute read is not a call", "Cache.label", nil, []string{"helper"}},
		{"this call through the base class", "Store.load", []string{"← Session.open  ts/store.ts:9"}, []string{"guess"}},
		{"a top-level const made by new is typed", "Session.open", []string{"← start  ts/main.ts:6"}, []string{"← use"}},
		{"a re-export or import list is not a caller", "use", []string{"← start  ts/main.ts:6"}, []string{"top level of main.ts"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, Callers, env, CallersArgs{Symbol: c.symbol})
			for _, w := range c.want {
				if !strings.Contains(r.Text, w) {
					t.Errorf("missing %q in\n%s", w, r.Text)
				}
			}
			for _, n := range c.not {
				if strings.Contains(r.Text, n) {
					t.Errorf("unexpected %q in\n%s", n, r.Text)
				}
			}
		})
	}
}

func TestBaseClasses(t *testing.T) {
	for _, c := range []struct{ lang, sig, want string }{
		{"python", "class Circle(Shape)", "Shape"},
		{"python", "class C(a.Base, Mixin, metaclass=M)", "Base Mixin"},
		{"python", "class C", ""},
		{"typescript", "class Session<T> extends Store<T> implements Opener", "Store"},
		{"typescript", "class Api implements Handler", ""},
		{"python", "class C(", ""},
		{"typescript", "class C extends", ""},
	} {
		if got := strings.Join(baseClasses(c.lang, c.sig), " "); got != c.want {
			t.Errorf("baseClasses(%s, %q) = %q, want %q", c.lang, c.sig, got, c.want)
		}
	}
}

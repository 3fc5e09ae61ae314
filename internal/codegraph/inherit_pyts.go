package codegraph

import "strings"

// inherited resolves self.name or this.name in class to the method of
// that name on the class or, failing that, on the nearest ancestor that
// has it (Python and TypeScript: the bases the class's signature
// names), as pyright and tsserver do; false when no class of the chain
// defines it.
func (g *Graph) inherited(fam, class, name string, out []defID) ([]defID, bool) {
	seen := map[string]bool{}
	for level, depth := []string{class}, 0; len(level) > 0 && depth < 10; depth++ {
		var next []string
		n := len(out)
		for _, c := range level {
			if seen[c] {
				continue
			}
			seen[c] = true
			for _, id := range g.defsNamed(name) {
				if cf, d := g.def(id); cf.fam == fam && d.Container == c && d.Kind == "method" {
					out = append(out, id)
				}
			}
			next = append(next, g.bases(fam, c)...)
		}
		if len(out) > n {
			return out, true
		}
		level = next
	}
	return out, false
}

// bases lists the classes a class of that name extends, by bare name.
func (g *Graph) bases(fam, class string) []string {
	var out []string
	for _, id := range g.defsNamed(class) {
		cf, d := g.def(id)
		if cf.fam != fam || d.Kind != "class" {
			continue
		}
		out = append(out, baseClasses(cf.Lang, d.Sig)...)
	}
	return out
}

// baseClasses reads the bases out of a class signature: class C(A, m.B)
// in Python, class C<T> extends B<T> implements I in TypeScript.
func baseClasses(lang, sig string) []string {
	var names []string
	switch lang {
	case "python":
		i := strings.IndexByte(sig, '(')
		if i < 0 {
			return nil
		}
		inner := strings.TrimSuffix(sig[i+1:i+closing(sig[i:])], ")") // unclosed in a cut signature
		for _, b := range strings.Split(inner, ",") {
			if b = strings.TrimSpace(b); b != "" && !strings.Contains(b, "=") {
				names = append(names, b)
			}
		}
	case "typescript", "tsx", "javascript":
		_, rest, ok := strings.Cut(sig, " extends ")
		if !ok {
			return nil
		}
		if f := strings.Fields(rest); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	var out []string
	for _, n := range names {
		n, _, _ = strings.Cut(n, "[")
		n, _, _ = strings.Cut(n, "<")
		n = n[strings.LastIndexByte(n, '.')+1:]
		if n != "" && n != "object" {
			out = append(out, n)
		}
	}
	return out
}

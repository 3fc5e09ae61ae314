package codegraph

import "strings"

// callQual is the receiver of x.F().name in Go as a local guessed from a
// call (the parse keeps the qualifier as "x.F()", or "F()"): typed, like
// y := x.F(), by the result of F.
func callQual(def int32, qual string) (*Local, bool) {
	call, ok := strings.CutSuffix(qual, "()")
	if !ok || call == "" {
		return nil, false
	}
	pkg, fn, ok := strings.Cut(call, ".")
	if !ok {
		pkg, fn = "", call
	}
	return &Local{Def: def, Name: qual, Type: fn, Pkg: pkg, Guess: true}, true
}

// fieldType is the type every Go field of one name agrees on, with where
// it is declared.
type fieldType struct {
	typ  string
	home typeHome
}

// agreedField is the type of a.f when a's type is unknown: the declared
// type every field f of the repository's Go structs agrees on ("" when
// they disagree or the type is from outside the repository).
func (g *Graph) agreedField(fam, name string) (string, typeHome) {
	g.typeOnce.Do(g.indexTypes)
	ft, ok := g.agreed[fam+" "+name]
	if !ok {
		return "", typeHome{}
	}
	return ft.typ, ft.home
}

func (g *Graph) indexAgreed() {
	g.agreed = map[string]fieldType{}
	off := map[string]bool{}
	for _, f := range g.Files {
		if f.Lang != "go" {
			continue
		}
		for _, l := range f.Fields {
			k := f.fam + " " + l.Name
			if off[k] || !f.structField(&l) {
				continue
			}
			ft := fieldType{typ: l.Type, home: typeHome{dir: f.dir}}
			if l.Pkg != "" {
				ft.home = typeHome{importPath: g.importOf(f, l.Pkg)}
				if ft.home.importPath == "" {
					off[k] = true
					delete(g.agreed, k)
					continue
				}
				if _, _, ours := g.moduleOf(ft.home.importPath); !ours {
					off[k] = true
					delete(g.agreed, k)
					continue
				}
			}
			if old, seen := g.agreed[k]; seen && old != ft {
				off[k] = true
				delete(g.agreed, k)
				continue
			}
			g.agreed[k] = ft
		}
	}
}

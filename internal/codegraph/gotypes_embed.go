package codegraph

// embedded is one Go embedded field: the type it names and where the
// struct or interface holding it is declared.
type embedded struct {
	typ, pkg string
	file     int32
}

// maxEmbedDepth bounds how deep promotion is followed (and ends a cycle).
const maxEmbedDepth = 4

// embedsOf lists the embedded fields of the Go types named typ, indexed
// on first use ("family type" → fields).
func (g *Graph) embedsOf(fam, typ string) []embedded {
	g.typeOnce.Do(g.indexTypes)
	return g.embeds[fam+" "+typ]
}

func (g *Graph) indexEmbeds() {
	g.embeds = map[string][]embedded{}
	for fi, f := range g.Files {
		for _, l := range f.Fields {
			if f.Lang == "go" && l.Name == l.Type && f.structField(&l) {
				k := f.fam + " " + f.Defs[l.Def].Name
				g.embeds[k] = append(g.embeds[k], embedded{typ: l.Type, pkg: l.Pkg, file: int32(fi)})
			}
		}
	}
}

// promoted appends the methods name that Go promotes into type typ
// (declared where home says) from the types it embeds, the shallowest
// level that has any, as the compiler picks them.
func (g *Graph) promoted(fam, typ string, home typeHome, name string, out []defID) []defID {
	type level struct {
		typ  string
		home typeHome
	}
	cur := []level{{typ, home}}
	for depth := 0; depth < maxEmbedDepth && len(cur) > 0; depth++ {
		var next []level
		n := len(out)
		for _, t := range cur {
			for _, e := range g.embedsOf(fam, t.typ) {
				ef := g.Files[e.file]
				if !g.holds(t.home, ef) {
					continue
				}
				h := typeHome{dir: ef.dir}
				if e.pkg != "" {
					if h = (typeHome{importPath: g.importOf(ef, e.pkg)}); h.importPath == "" {
						continue // a type from outside the repository
					}
				}
				for _, id := range g.defsNamed(name) {
					cf, d := g.def(id)
					if cf.fam == fam && d.Kind == "method" && d.Container == e.typ && g.holds(h, cf) {
						out = append(out, id)
					}
				}
				next = append(next, level{e.typ, h})
			}
		}
		if len(out) > n {
			return out
		}
		cur = next
	}
	return out
}

// methodSet is the methods of type typ with their shapes, those it
// declares and those promoted from what it embeds (an interface's
// embedded interfaces too); the shallower declaration wins.
func (g *Graph) methodSet(fam, typ string) map[string]string {
	own := g.methodShapes()[fam+" "+typ]
	if len(g.embedsOf(fam, typ)) == 0 {
		return own
	}
	set := make(map[string]string, len(own))
	seen := map[string]bool{typ: true}
	cur := []string{typ}
	for depth := 0; depth <= maxEmbedDepth && len(cur) > 0; depth++ {
		var next []string
		level := map[string]string{}
		for _, t := range cur {
			for name, shape := range g.methodShapes()[fam+" "+t] {
				if _, ok := set[name]; !ok {
					level[name] = shape
				}
			}
			for _, e := range g.embedsOf(fam, t) {
				if !seen[e.typ] {
					seen[e.typ] = true
					next = append(next, e.typ)
				}
			}
		}
		for name, shape := range level {
			set[name] = shape
		}
		cur = next
	}
	return set
}

package codegraph

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// FindArgs are code_find's arguments.
type FindArgs struct {
	Question string `json:"question"`
	In       string `json:"in"`
	Source   bool   `json:"source"`
	Limit    int    `json:"limit"`
}

const (
	findDefault = 8
	findMax     = 20
	sourceLines = 8
)

// stopWords carry no name in a question.
var stopWords = words(`a an the is are was be to of in on at for and or not no with from by as it its this that
these those what where which who how why when does do did can could should would will i we you me my our
find show all any some code function functions method methods class classes defined definition implemented
implementation`)

// terms splits a question into lowercase words, each identifier also into
// its camelCase and snake_case parts.
func terms(q string) []string {
	seen := map[string]bool{}
	var out []string
	addTerm := func(w string) {
		w = strings.ToLower(w)
		if len(w) < 2 || seen[w] {
			return
		}
		seen[w] = true
		out = append(out, w)
	}
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		if stopWords[strings.ToLower(w)] {
			continue
		}
		parts := splitName(w)
		if len(parts) > 1 {
			addTerm(strings.ReplaceAll(w, "_", ""))
		}
		for _, p := range parts {
			if !stopWords[p] {
				addTerm(p)
			}
		}
	}
	return out
}

// splitName splits an identifier into lowercase words: HTTPServerStart →
// http server start, load_file → load file.
func splitName(s string) []string {
	var out []string
	var cur []rune
	rs := []rune(s)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == '/':
			flush()
			continue
		case unicode.IsUpper(r) && len(cur) > 0:
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

type scored struct {
	id    defID
	score float64
	tier  int // 2: the definition a qualified name of the question names; 1: one named exactly
	near  int // path elements its folder shares with the asking folder (for tier > 0)
}

// scoreDef weighs a definition against the question's terms: its name
// first, then its container, path and signature; a definition matching
// more of the terms beats one matching a single term well.
func scoreDef(ts []string, weight []float64, f *File, d *Def, pathWords []string) float64 {
	total, matched := 0.0, 0
	for ti, t := range ts {
		s := 0.0
		if i := indexFold(d.Name, t, 0); i >= 0 {
			switch {
			case len(d.Name) == len(t):
				s = 10
			case wordIn(d.Name, t, i):
				s = 6
			case len(t) >= 3:
				s = 3
			}
		} else if st := stem(t); st != t && indexFold(d.Name, st, 0) >= 0 {
			s = 3 // executed finds execute, executor
		}
		if i := indexFold(d.Container, t, 0); i >= 0 {
			if wordIn(d.Container, t, i) {
				s += 2
			} else if len(t) >= 4 {
				s += 0.5
			}
		}
		if contains(pathWords, t) {
			s += 1.5
		}
		if s == 0 && containsFold(d.Sig, t) {
			s = 1
		}
		if s > 0 {
			matched++
		}
		total += s * weight[ti]
	}
	if matched == 0 {
		return 0
	}
	total += 4 * float64(matched*matched) / float64(len(ts))
	switch d.Kind {
	case "const", "var", "module":
		total -= 0.5
	}
	if isTest(f.Path, d.Name) {
		total *= 0.8 // the implementation first; a test still shows
	}
	return total
}

// stem cuts a common English ending off a longer word.
func stem(t string) string {
	if len(t) < 6 {
		return t
	}
	for _, suf := range []string{"ations", "ation", "ings", "ing", "ers", "ed", "es", "er", "or", "s"} {
		if r, ok := strings.CutSuffix(t, suf); ok && len(r) >= 4 {
			return r
		}
	}
	return t
}

// isTest reports a test file, a test function or a mock by the usual names.
func isTest(p, name string) bool {
	base := path.Base(p)
	return strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "test_") || strings.HasPrefix(name, "Mock") ||
		strings.Contains(base, "mock") ||
		strings.Contains(base, "_test.") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.HasPrefix(base, "test_") || strings.Contains(p, "/tests/") || strings.HasPrefix(p, "tests/")
}

func contains(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// Find ranks the definitions and files of a repository against a question.
func Find(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a FindArgs
	if err := decode(raw, &a); err != nil {
		return errorf("%v", err)
	}
	if strings.TrimSpace(a.Question) == "" {
		return errorf("question: is required (what to look for, in words or names)")
	}
	if a.Limit == 0 {
		a.Limit = findDefault
	}
	if a.Limit < 1 || a.Limit > findMax {
		return errorf("limit: must be between 1 and %d, not %d", findMax, a.Limit)
	}
	ts := terms(a.Question)
	if len(ts) == 0 {
		return errorf("question: %q holds no word to look for", a.Question)
	}
	t, err := env.byPath("in", a.In)
	if err != nil {
		return errorf("%v", err)
	}
	if r, ok := env.unparsedFile(t); ok {
		return r
	}
	g, err := env.open(ctx, t)
	if err != nil {
		return errorf("code graph of %s: %v", t.name, err)
	}

	hits, files := rank(g, t.scope, ts, false)
	if len(hits) < a.Limit {
		// Few names match: let the signatures speak too.
		hits, files = rank(g, t.scope, ts, true)
	}
	named := namesIn(a.Question)
	asking := t.scope
	if name, rel, ok := env.repoOf(env.Cwd); ok && name == t.name {
		asking = rel
	}
	for i := range hits {
		f, d := g.def(hits[i].id)
		hits[i].tier = named.tier(f, d)
		if hits[i].tier > 0 {
			hits[i].near = sharedHead(asking, f.dir)
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		hi, hj := hits[i], hits[j]
		if hi.tier != hj.tier {
			return hi.tier > hj.tier
		}
		if hi.tier > 0 && hi.near != hj.near {
			return hi.near > hj.near
		}
		if hi.tier > 0 {
			fi, fj := g.Files[hi.id.file], g.Files[hj.id.file]
			if ci, cj := fi.Count(int(hi.id.def)), fj.Count(int(hj.id.def)); ci != cj {
				return ci > cj
			}
		}
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		fi, di := g.def(hits[i].id)
		fj, dj := g.def(hits[j].id)
		if fi.Path != fj.Path {
			return fi.Path < fj.Path
		}
		return di.Line < dj.Line
	})
	sort.SliceStable(files, func(i, j int) bool { return files[i].score > files[j].score })

	out := newLines(env.maxBytes(), "; ask a narrower question or pass in")
	meta := map[string]any{"repository": t.name}
	if len(hits) == 0 && len(files) == 0 {
		meta["hits"] = 0
		out.add("no definition or file of %s matches %s (code_search finds text)", t.name, strings.Join(ts, ", "))
		return Result{Text: out.String(), Meta: meta}
	}
	if len(hits) > a.Limit {
		hits = hits[:a.Limit]
	}
	for i, h := range hits {
		f, d := g.def(h.id)
		out.add("%d. %s %s  %s:%s  (%s)", i+1, d.Kind, d.QualName(), env.show(g, f.Path), span(d), plural(f.Count(int(h.id.def)), "ref", "refs"))
		out.add("   %s", d.Sig)
		if a.Source {
			for _, l := range sourceOf(g, f, d) {
				out.add("   | %s", clip(l))
			}
		}
	}
	if len(files) > 0 {
		n := min(len(files), 5)
		out.add("files:")
		for _, fh := range files[:n] {
			desc := fh.f.Lang
			if desc == "" {
				desc = "not parsed"
			}
			out.add("  %s  (%s, %s)", env.show(g, fh.f.Path), desc, plural(len(fh.f.Defs), "definition", "definitions"))
		}
	}
	meta["hits"] = len(hits)
	return Result{Text: out.String(), Meta: meta}
}

// sourceOf reads up to sourceLines lines of a definition.
func sourceOf(g *Graph, f *File, d *Def) []string {
	fh, err := os.Open(filepath.Join(g.Root, filepath.FromSlash(f.Path)))
	if err != nil {
		return nil
	}
	defer func() { _ = fh.Close() }() // read only; the lines are in hand
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var out []string
	last := min(int(d.End), int(d.Line)+sourceLines-1)
	for n := 1; sc.Scan() && n <= last; n++ {
		if n >= int(d.Line) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// containsFold reports whether s contains the lowercase ASCII word t,
// ignoring the case of s, without allocating.
func containsFold(s, t string) bool { return indexFold(s, t, 0) >= 0 }

// indexFold is the first index at or after from where s holds t (a
// lowercase word), case aside; -1 when it does not.
func indexFold(s, t string, from int) int {
	if len(t) == 0 {
		return from
	}
	first := t[0]
	upper := first
	if 'a' <= first && first <= 'z' {
		upper = first - 32
	}
	for i := from; i+len(t) <= len(s); i++ {
		if c := s[i]; c != first && c != upper {
			continue
		}
		j := 1
		for ; j < len(t); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 32
			}
			if c != t[j] {
				break
			}
		}
		if j == len(t) {
			return i
		}
	}
	return -1
}

// wordIn reports whether t occurs in the identifier s as one of its
// words (split at case changes, underscores and digits), looking from the
// occurrence at i on, without allocating: HistoryTask holds task, Tasks
// does not hold task as a word.
func wordIn(s, t string, i int) bool {
	for ; i >= 0; i = indexFold(s, t, i+1) {
		end := i + len(t)
		// A word starts the name, follows a separator, or starts with a
		// capital (after a lowercase letter, or ending an acronym run:
		// HTTPServer holds server).
		startOK := i == 0 || s[i-1] == '_' || s[i-1] == '.' || isUpper(s[i])
		endOK := end == len(s) || s[end] == '_' || s[end] == '.' || isUpper(s[end]) || isDigit(s[end])
		if startOK && endOK {
			return true
		}
	}
	return false
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// prefilter is one cheap pass over the definitions in scope: the ones
// any term (or its stem) occurs in (name, container, and with withSig the
// signature, case aside), by file,
// and a weight per term that favours a rare term over a common one
// (inverse document frequency by name and container, mean 1).
func prefilter(g *Graph, scope string, ts []string, withSig bool) ([]float64, [][]int32) {
	stems := make([]string, len(ts))
	for i, t := range ts {
		stems[i] = stem(t)
	}
	df := make([]int, len(ts))
	cands := make([][]int32, len(g.Files))
	n := 0
	for fi, f := range g.Files {
		if !inScope(scope, f.Path) {
			continue
		}
		for i := range f.Defs {
			d := &f.Defs[i]
			n++
			hit := false
			for ti, t := range ts {
				switch {
				case containsFold(d.Name, t) || containsFold(d.Container, t):
					df[ti]++
					hit = true
				case hit:
				case stems[ti] != t && containsFold(d.Name, stems[ti]):
					hit = true
				case withSig && containsFold(d.Sig, t):
					hit = true
				}
			}
			if hit {
				cands[fi] = append(cands[fi], int32(i))
			}
		}
	}
	w := make([]float64, len(ts))
	sum := 0.0
	for i := range ts {
		w[i] = math.Log(float64(n+1)/float64(df[i]+1)) + 1
		sum += w[i]
	}
	for i := range w {
		w[i] *= float64(len(w)) / sum
	}
	return w, cands
}

type fileHit struct {
	f     *File
	score float64
}

// rank scores the definitions and files in scope against the terms.
func rank(g *Graph, scope string, ts []string, withSig bool) ([]scored, []fileHit) {
	weight, cands := prefilter(g, scope, ts, withSig)
	var hits []scored
	var files []fileHit
	for fi, f := range g.Files {
		if !inScope(scope, f.Path) {
			continue
		}
		var pathWords []string
		pathHit := false
		for _, w := range ts {
			if containsFold(f.Path, w) {
				pathHit = true
				pathWords = splitName(f.Path)
				break
			}
		}
		best := 0.0
		which := cands[fi]
		if pathHit {
			which = nil
			for di := range f.Defs {
				which = append(which, int32(di))
			}
		}
		for _, di := range which {
			d := &f.Defs[di]
			s := scoreDef(ts, weight, f, d, pathWords)
			if s <= 0 {
				continue
			}
			s += math.Log1p(float64(f.Count(int(di)))) * 0.5
			hits = append(hits, scored{id: defID{int32(fi), di}, score: s})
			best = math.Max(best, s)
		}
		pm := 0
		for _, w := range ts {
			if !pathHit {
				break
			}
			if contains(pathWords, w) {
				pm++
			}
		}
		if pm > 0 {
			files = append(files, fileHit{f, float64(pm)*10 + best/10})
		}
	}
	return hits, files
}

package codegraph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// SymbolsArgs are code_search's arguments in mode symbols.
type SymbolsArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	Fixed      bool   `json:"fixed"`
	IgnoreCase bool   `json:"ignore_case"`
	Limit      int    `json:"limit"` // groups shown, at most maxGroups
}

const (
	maxGroups     = 20
	linesPerGroup = 5
)

type hit struct {
	line int32
	text string
}

type group struct {
	file  *File
	def   int32 // -1: outside every definition
	hits  []hit
	total int
}

// Symbols finds text and groups the hits under their enclosing function
// or class, with its span and how many places reference it.
func Symbols(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a SymbolsArgs
	if err := decode(raw, &a); err != nil {
		return errorf("%v", err)
	}
	if a.Pattern == "" {
		return errorf("pattern: is required")
	}
	expr := a.Pattern
	if a.Fixed {
		expr = regexp.QuoteMeta(expr)
	}
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorf("pattern: does not parse as a regular expression: %v (fixed: true searches it literally)", err)
	}
	var glob *regexp.Regexp
	if a.Glob != "" {
		if glob, err = globRegexp(a.Glob); err != nil {
			return errorf("glob: %v", err)
		}
	}
	t, err := env.byPath("path", a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	g, err := env.open(ctx, t)
	if err != nil {
		return errorf("code graph of %s: %v", t.name, err)
	}
	var files []*File
	for _, f := range g.Files {
		if !inScope(t.scope, f.Path) {
			continue
		}
		if glob != nil {
			rel := strings.TrimPrefix(strings.TrimPrefix(f.Path, t.scope), "/")
			if !glob.MatchString(rel) && !glob.MatchString(path.Base(f.Path)) {
				continue
			}
		}
		files = append(files, f)
	}
	groups, matches, nfiles := g.grep(ctx, re, files)

	meta := map[string]any{"repository": t.name, "matches": matches, "files": nfiles, "hits": len(groups)}
	if matches == 0 {
		return Result{Text: fmt.Sprintf("no match for %s in %s", a.Pattern, env.show(g, t.scope)), Meta: meta}
	}
	out := newLines(env.maxBytes(), "; narrow with path or glob")
	limit := maxGroups
	if a.Limit > 0 && a.Limit < maxGroups {
		limit = a.Limit
	}
	shown := groups
	if len(shown) > limit {
		shown = shown[:limit]
	}
	for _, gr := range shown {
		p := env.show(g, gr.file.Path)
		if gr.def < 0 {
			label := "(top level)"
			if gr.file.Lang == "" {
				label = "(not in the graph)"
			}
			out.add("%s %s", p, label)
		} else {
			d := &gr.file.Defs[gr.def]
			out.add("%s %s  %s:%s  (%s)", d.Kind, d.QualName(), p, span(d), plural(gr.file.Count(int(gr.def)), "ref", "refs"))
		}
		for _, h := range gr.hits {
			out.add("  %d: %s", h.line, clip(h.text))
		}
		if gr.total > len(gr.hits) {
			out.add("  … %d more in it", gr.total-len(gr.hits))
		}
	}
	summary := fmt.Sprintf("%s in %s, %s", plural(matches, "match", "matches"), plural(len(groups), "group", "groups"), plural(nfiles, "file", "files"))
	if len(groups) > limit {
		summary += fmt.Sprintf("; showing the first %d groups", limit)
	}
	out.add("%s", summary)
	return Result{Text: out.String(), Meta: meta}
}

// grep scans files for re, two workers per core, and groups the matched
// lines under the innermost definition holding them.
func (g *Graph) grep(ctx context.Context, re *regexp.Regexp, files []*File) ([]*group, int, int) {
	literal, _ := re.LiteralPrefix()
	per := make([][]*group, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				per[i] = grepFile(g.Root, files[i], re, literal)
			}
		}()
	}
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	var groups []*group
	matches, nfiles := 0, 0
	for _, gs := range per {
		if len(gs) > 0 {
			nfiles++
		}
		for _, gr := range gs {
			matches += gr.total
			groups = append(groups, gr)
		}
	}
	return groups, matches, nfiles
}

func grepFile(root string, f *File, re *regexp.Regexp, literal string) []*group {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path))) //nolint:gosec // G304: a file of the graph, which git lists in the repository
	if err != nil || bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
		return nil // gone, or binary
	}
	if len(src) >= math.MaxInt32 {
		return nil // beyond the offsets and lines the graph keeps
	}
	locs := matchLines(src, re, literal)
	if len(locs) == 0 {
		return nil
	}
	starts := lineStarts(src)
	var groups []*group
	byDef := map[int32]*group{}
	lastLine := int32(-1)
	for _, at := range locs {
		line := lineOf(starts, offset(uint(at)))
		if line == lastLine {
			continue // one hit per line
		}
		lastLine = line
		di := f.innermost(line)
		gr := byDef[di]
		if gr == nil {
			gr = &group{file: f, def: di}
			byDef[di] = gr
			groups = append(groups, gr)
		}
		gr.total++
		if len(gr.hits) < linesPerGroup {
			end := len(src)
			if int(line) < len(starts) {
				end = int(starts[line]) - 1
			}
			gr.hits = append(gr.hits, hit{line, string(src[starts[line-1]:max(end, int(starts[line-1]))])})
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].hits[0].line < groups[j].hits[0].line })
	return groups
}

// innermost is the definition whose span holds line most closely; a
// constant or variable counts only when nothing else does.
func (f *File) innermost(line int32) int32 {
	best := int32(-1)
	for i := range f.Defs {
		d := &f.Defs[i]
		if d.Line > line {
			break
		}
		if d.End < line {
			continue
		}
		if best < 0 || d.Line >= f.Defs[best].Line {
			best = int32(i)
		}
	}
	return best
}

// globRegexp turns a glob (*, **, ?, [..], {a,b}) into a regular expression
// over slash-separated paths.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	inClass, braces := false, 0
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '*':
			if i+1 < len(glob) && glob[i+1] == '*' {
				i++
				if i+1 < len(glob) && glob[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			inClass = true
			b.WriteByte(c)
		case c == '{':
			braces++
			b.WriteString("(?:")
		case c == '}' && braces > 0:
			braces--
			b.WriteString(")")
		case c == ',' && braces > 0:
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if inClass || braces > 0 {
		return nil, fmt.Errorf("%q is not a complete glob", glob)
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// matchLines returns the start of every line holding a match. With a
// literal prefix only the lines holding the literal are tried; a match
// never spans lines, as in text search.
func matchLines(src []byte, re *regexp.Regexp, literal string) []int {
	var out []int
	if literal == "" {
		for _, loc := range re.FindAllIndex(src, -1) {
			out = append(out, loc[0])
		}
		return out
	}
	lit := []byte(literal)
	for from := 0; from < len(src); {
		i := bytes.Index(src[from:], lit)
		if i < 0 {
			break
		}
		i += from
		start := bytes.LastIndexByte(src[:i], '\n') + 1
		end := bytes.IndexByte(src[i:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += i
		}
		if loc := re.FindIndex(src[start:end]); loc != nil {
			out = append(out, start+loc[0])
		}
		from = end + 1
	}
	return out
}

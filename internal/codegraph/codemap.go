package codegraph

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
)

// MapArgs are code_map's arguments.
type MapArgs struct {
	Repo string `json:"repo"`
}

const (
	maxClusters   = 40
	topPerCluster = 3
	topOverall    = 15
)

type cluster struct {
	dir     string
	files   int
	symbols int
	top     []defID
}

// Map gives a repository's directory clusters, with their file and symbol
// counts and most referenced symbols, then the most referenced overall.
func Map(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a MapArgs
	if err := decode(raw, &a); err != nil {
		return errorf("%v", err)
	}
	t, err := env.byName("repo", strings.TrimSpace(a.Repo))
	if err != nil {
		return errorf("%v", err)
	}
	g, err := env.open(ctx, t)
	if err != nil {
		return errorf("code graph of %s: %v", t.name, err)
	}
	clusters := g.clusters(2)
	if len(clusters) > maxClusters {
		clusters = g.clusters(1)
	}
	var all []defID
	langs := map[string]int{}
	parsed, symbols := 0, 0
	for fi, f := range g.Files {
		if f.Lang != "" {
			parsed++
			langs[f.Lang]++
		}
		symbols += len(f.Defs)
		for di := range f.Defs {
			if f.Count(di) > 0 {
				all = append(all, defID{int32(fi), int32(di)})
			}
		}
	}
	out := newLines(env.maxBytes(), "; code_map shows folders two deep, code_find narrows")
	out.add("repository %s (%s): %s, %s in the graph (%s), %s", t.name, env.show(g, ""), plural(len(g.Files), "file", "files"),
		fmt.Sprint(parsed), langSummary(langs), plural(symbols, "symbol", "symbols"))
	for _, c := range clusters {
		var tops []string
		for _, id := range c.top {
			f, d := g.def(id)
			tops = append(tops, fmt.Sprintf("%s (%d)", d.QualName(), f.Count(int(id.def))))
		}
		line := fmt.Sprintf("%s/  %s, %s", env.show(g, c.dir), plural(c.files, "file", "files"), plural(c.symbols, "symbol", "symbols"))
		if c.dir == "" {
			line = fmt.Sprintf("%s (top level)  %s, %s", env.show(g, ""), plural(c.files, "file", "files"), plural(c.symbols, "symbol", "symbols"))
		}
		if len(tops) > 0 {
			line += " · " + strings.Join(tops, ", ")
		}
		out.add("%s", line)
	}
	g.byCount(all)
	if len(all) > topOverall {
		all = all[:topOverall]
	}
	if len(all) > 0 {
		out.add("most referenced:")
		for _, id := range all {
			f, d := g.def(id)
			out.add("  %s %s  %s:%d  (%s)", d.Kind, d.QualName(), env.show(g, f.Path), d.Line, plural(f.Count(int(id.def)), "ref", "refs"))
		}
	}
	return Result{Text: out.String(), Meta: map[string]any{"repository": t.name, "hits": len(clusters)}}
}

func langSummary(langs map[string]int) string {
	var ls []string
	for l := range langs {
		ls = append(ls, l)
	}
	sort.Slice(ls, func(i, j int) bool {
		return langs[ls[i]] > langs[ls[j]] || langs[ls[i]] == langs[ls[j]] && ls[i] < ls[j]
	})
	var parts []string
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%s %d", l, langs[l]))
	}
	if len(parts) == 0 {
		return "no language it parses"
	}
	return strings.Join(parts, ", ")
}

// clusters groups files by their folder cut to depth components.
func (g *Graph) clusters(depth int) []*cluster {
	byDir := map[string]*cluster{}
	for fi, f := range g.Files {
		dir := path.Dir(f.Path)
		if dir == "." {
			dir = ""
		}
		if parts := strings.Split(dir, "/"); dir != "" && len(parts) > depth {
			dir = strings.Join(parts[:depth], "/")
		}
		c := byDir[dir]
		if c == nil {
			c = &cluster{dir: dir}
			byDir[dir] = c
		}
		c.files++
		c.symbols += len(f.Defs)
		for di := range f.Defs {
			if f.Count(di) > 0 {
				c.top = append(c.top, defID{int32(fi), int32(di)})
			}
		}
	}
	out := make([]*cluster, 0, len(byDir))
	for _, c := range byDir {
		g.byCount(c.top)
		if len(c.top) > topPerCluster {
			c.top = c.top[:topPerCluster]
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

// byCount sorts definitions most referenced first.
func (g *Graph) byCount(ids []defID) {
	sort.SliceStable(ids, func(i, j int) bool {
		fi, di := g.def(ids[i])
		fj, dj := g.def(ids[j])
		ci, cj := fi.Count(int(ids[i].def)), fj.Count(int(ids[j].def))
		if ci != cj {
			return ci > cj
		}
		if fi.Path != fj.Path {
			return fi.Path < fj.Path
		}
		return di.Line < dj.Line
	})
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// measureCorpus is measure for a Python or TypeScript corpus: the
// language server both lists the definitions (documentSymbol) and says
// who calls them (callHierarchy/incomingCalls), so nothing of the graph's
// own parsing decides the truth.
func measureCorpus(work, home string, c corpus, helperBin string, server []string, per int, seed uint64, verbose bool) ([]score, error) {
	dir, err := copyCorpus(c, filepath.Join(home, "repos"))
	if err != nil {
		return nil, err
	}
	files, err := sourceFiles(dir, c.lang)
	if err != nil {
		return nil, err
	}
	s, err := startLSP(dir, server, nil)
	if err != nil {
		return nil, err
	}
	defer s.close()
	for _, rel := range files {
		if err := s.open(dir, rel, c.lang); err != nil {
			return nil, err
		}
	}
	cands := map[string][]target{}
	index := map[string]fileIndex{}
	for _, rel := range files {
		if index[rel], err = outline(s, dir, rel, c.lang, cands); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
	}
	h := helper{bin: helperBin, home: home, run: filepath.Join(work, "run")}
	var out []score
	for _, t := range sample(cands, per, seed) {
		sites, err := s.incoming(filepath.Join(dir, t.rel), t.line-1, t.col)
		if err != nil {
			fmt.Fprintf(os.Stderr, "skipped %s %s: %s server: %v\n", t.rel, t.symbol(), c.lang, err)
			continue
		}
		truth := map[string]bool{}
		for _, st := range sites {
			rel, err := filepath.Rel(dir, st.file)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			truth[rel+" "+index[rel].at(st.line)] = true
		}
		sc, err := compare(h, c, t, truth, index, verbose)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// compare scores the graph's callers and code_find of t against truth,
// the caller units the language server names.
func compare(h helper, c corpus, t target, truth map[string]bool, index map[string]fileIndex, verbose bool) (score, error) {
	edges, capped, err := h.callers(c.name, t)
	if err != nil {
		return score{}, err
	}
	sc := score{module: c.lang + ": " + c.label, stratum: t.stratum, truth: len(truth), capped: capped}
	tool := map[string]bool{}
	for _, e := range edges {
		key := e.rel + " " + index[e.rel].at(e.line)
		if e.through {
			sc.through++
		}
		if tool[key] {
			continue
		}
		tool[key] = true
		if !e.guess && !e.through {
			sc.unflagged++
			if truth[key] {
				sc.unflaggedHit++
			}
		}
		if truth[key] {
			sc.hit++
		} else if verbose {
			fmt.Fprintf(os.Stderr, "extra  %s %s: %s (guess %v)\n", c.label, t.symbol(), key, e.guess)
		}
	}
	sc.tool = len(tool)
	if verbose {
		for k := range truth {
			if !tool[k] {
				fmt.Fprintf(os.Stderr, "missed %s %s (%s): %s\n", c.label, t.symbol(), t.stratum, k)
			}
		}
	}
	if sc.findQual, err = h.findsFirst(c.name, t.symbol(), t); err != nil {
		return score{}, err
	}
	if sc.findBare, err = h.findsFirst(c.name, t.name, t); err != nil {
		return score{}, err
	}
	return sc, nil
}

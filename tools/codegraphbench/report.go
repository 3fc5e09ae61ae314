package main

import (
	"fmt"
	"slices"
)

type tally struct {
	samples, truth, tool, hit, unflagged, unflaggedHit, through, capped int
	staticTruth, staticHit                                              int
	findQual, findBare                                                  int
}

func total(ss []score, stratum string) tally {
	var t tally
	for _, s := range ss {
		if stratum != "" && s.stratum != stratum {
			continue
		}
		t.samples++
		t.truth += s.truth
		t.tool += s.tool
		t.hit += s.hit
		t.unflagged += s.unflagged
		t.unflaggedHit += s.unflaggedHit
		t.through += s.through
		if s.capped {
			t.capped++
		}
		if s.stratum != "interface" {
			t.staticTruth += s.truth
			t.staticHit += s.hit
		}
		if s.findQual {
			t.findQual++
		}
		if s.findBare {
			t.findBare++
		}
	}
	return t
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func (t tally) precision() float64          { return ratio(t.hit, t.tool) }
func (t tally) recall() float64             { return ratio(t.hit, t.truth) }
func (t tally) unflaggedPrecision() float64 { return ratio(t.unflaggedHit, t.unflagged) }
func (t tally) f1() float64 {
	p, r := t.precision(), t.recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// report prints a Markdown table: each module by stratum, its total, and
// the total over all modules.
func report(ss []score) {
	fmt.Println("| module | stratum | defs | gopls callers | graph callers | precision | recall | F1 | unflagged precision (n) | static recall | find@1 qualified | find@1 bare | through an interface |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var modules []string
	for _, s := range ss {
		if !slices.Contains(modules, s.module) {
			modules = append(modules, s.module)
		}
	}
	row := func(module, stratum string, t tally) {
		static := "–"
		if t.staticTruth > 0 {
			static = fmt.Sprintf("%.2f", ratio(t.staticHit, t.staticTruth))
		}
		fmt.Printf("| %s | %s | %d | %d | %d | %.2f | %.2f | %.2f | %.3f (%d) | %s | %.2f | %.2f | %d |\n",
			module, stratum, t.samples, t.truth, t.tool, t.precision(), t.recall(), t.f1(),
			t.unflaggedPrecision(), t.unflagged, static,
			ratio(t.findQual, t.samples), ratio(t.findBare, t.samples), t.through)
	}
	for _, m := range modules {
		var mine []score
		for _, s := range ss {
			if s.module == m {
				mine = append(mine, s)
			}
		}
		for _, st := range strata {
			if t := total(mine, st); t.samples > 0 {
				row(m, st, t)
			}
		}
		row(m, "**all**", total(mine, ""))
	}
	row("**all**", "**all**", total(ss, ""))
}

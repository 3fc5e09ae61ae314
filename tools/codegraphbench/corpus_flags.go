package main

import (
	"flag"
	"fmt"
	"strings"
)

// otherCorpora are the Python and TypeScript trees asked for by flag,
// with the language server each is measured against.
type otherCorpora struct {
	python, pyright, typescript, tsserver *string
}

func corpusFlags() otherCorpora {
	return otherCorpora{
		python:     flag.String("python", "", "comma-separated name@version=/folder of a Python package to measure against pyright"),
		pyright:    flag.String("pyright", "", "the pyright-langserver binary"),
		typescript: flag.String("typescript", "", "comma-separated name@version=/folder of TypeScript sources to measure against typescript-language-server"),
		tsserver:   flag.String("tsserver", "", "the typescript-language-server binary"),
	}
}

func (o otherCorpora) asked() bool {
	return *o.python != "" && *o.pyright != "" || *o.typescript != "" && *o.tsserver != ""
}

// measure runs every corpus asked for; low reports one below the floor.
func (o otherCorpora) measure(work, home, helperBin string, per int, seed uint64, verbose bool, below func(tally) bool) ([]score, bool, error) {
	var all []score
	low := false
	for _, l := range []struct {
		lang, spec string
		server     []string
	}{
		{"python", *o.python, []string{*o.pyright, "--stdio"}},
		{"typescript", *o.typescript, []string{*o.tsserver, "--stdio"}},
	} {
		if l.spec == "" {
			continue
		}
		if l.server[0] == "" {
			return nil, false, fmt.Errorf("-%s needs its language server's flag", l.lang)
		}
		cs, err := parseCorpora(l.lang, l.spec)
		if err != nil {
			return nil, false, err
		}
		for _, c := range cs {
			s, err := measureCorpus(work, home, c, helperBin, l.server, per, seed, verbose)
			if err != nil {
				return nil, false, fmt.Errorf("%s %s: %w", l.lang, strings.TrimSpace(c.label), err)
			}
			all = append(all, s...)
			low = low || below(total(s, ""))
		}
	}
	return all, low, nil
}

package codegraph

import (
	"strings"
	"unicode"
)

// questionNames are the identifiers a code_find question writes out:
// bare names (Close) and qualified ones (Conn.Close, store.New).
type questionNames struct {
	bare      map[string]bool
	qualified map[string][]string // name → the qualifiers written before it
}

func namesIn(q string) questionNames {
	n := questionNames{bare: map[string]bool{}, qualified: map[string][]string{}}
	toks := strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '.' && r != ':' && r != '#'
	})
	for _, tok := range toks {
		tok = strings.Trim(tok, ".:#")
		if len(toks) > 1 && !looksLikeName(tok) {
			continue // a word of a sentence, not a name
		}
		name, qual := tok, ""
		for _, sep := range []string{"::", ".", "#"} {
			if i := strings.LastIndex(tok, sep); i > 0 {
				qual, name = tok[:i], tok[i+len(sep):]
				break
			}
		}
		if name == "" || stopWords[strings.ToLower(name)] {
			continue
		}
		n.bare[name] = true
		if qual != "" {
			if i := strings.LastIndexAny(qual, ".:/#"); i >= 0 {
				qual = qual[i+1:]
			}
			n.qualified[name] = append(n.qualified[name], qual)
		}
	}
	return n
}

// tier is 2 for a definition a qualified name of the question names (by
// its type, package, folder or file), 1 for one a name names exactly, else 0.
func (n questionNames) tier(f *File, d *Def) int {
	if !n.bare[d.Name] {
		return 0
	}
	for _, q := range n.qualified[d.Name] {
		if q == d.Container || q == f.Pkg || q == f.dirBase || q == f.stem {
			return 2
		}
	}
	return 1
}

// sharedHead counts the leading folders two slash paths share ("" and
// "." are the root: a, a/b share 1 with a/c).
func sharedHead(a, b string) int {
	if a == "." {
		a = ""
	}
	if b == "." {
		b = ""
	}
	n := 0
	for a != "" && b != "" {
		ha, ra, _ := strings.Cut(a, "/")
		hb, rb, _ := strings.Cut(b, "/")
		if ha != hb {
			break
		}
		n++
		a, b = ra, rb
	}
	return n
}

// looksLikeName tells an identifier in a sentence from a word: it is
// qualified, or holds a capital, an underscore or a digit.
func looksLikeName(tok string) bool {
	if strings.ContainsAny(tok, ".:#_0123456789") {
		return true
	}
	for i, r := range tok {
		if unicode.IsUpper(r) && i > 0 {
			return true
		}
	}
	return tok != "" && unicode.IsUpper(rune(tok[0]))
}

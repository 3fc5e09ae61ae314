package main

import (
	"os"
	"path/filepath"
	"strings"
)

// LSP symbol kinds the outline reads.
const (
	kindClass       = 5
	kindMethod      = 6
	kindProperty    = 7
	kindConstructor = 9
	kindInterface   = 11
	kindFunction    = 12
)

// docSymbol is one entry of textDocument/documentSymbol, hierarchical form.
type docSymbol struct {
	Name           string      `json:"name"`
	Kind           int         `json:"kind"`
	Range          lspRange    `json:"range"`
	SelectionRange lspRange    `json:"selectionRange"`
	Children       []docSymbol `json:"children"`
}

// commonMethodNames are Python and TypeScript method names many classes share.
var commonMethodNames = map[string]bool{"get": true, "set": true, "close": true, "read": true, "write": true,
	"run": true, "add": true, "update": true, "copy": true, "format": true, "parse": true, "invoke": true,
	"open": true, "reset": true, "start": true, "stop": true, "emit": true, "push": true, "pop": true,
	"has": true, "delete": true, "clear": true, "toString": true, "dispose": true, "apply": true, "call": true,
	"convert": true, "make_context": true, "main": true, "get_default": true, "to_info_dict": true,
	"get_help": true, "value": true, "name": true, "report": true, "observe": true, "intercept": true,
	"onBecomeStale": true, "keys": true, "values": true, "entries": true, "forEach": true}

// outline asks the server for the definitions of one file: the
// candidates of each stratum and the index that maps a line to its
// caller unit (the function or method holding it, not nested closures;
// else the class; else the top level).
func outline(s *lsp, root, rel, lang string, cands map[string][]target) (fileIndex, error) {
	var syms []docSymbol
	err := s.call("textDocument/documentSymbol", map[string]any{
		"textDocument": map[string]string{"uri": fileURI(filepath.Join(root, rel))}}, &syms)
	if err != nil {
		return fileIndex{}, err
	}
	src, err := os.ReadFile(filepath.Join(root, rel)) //nolint:gosec // G304: a file of the copied corpus
	if err != nil {
		return fileIndex{}, err
	}
	lines := strings.Split(string(src), "\n")
	stem := strings.TrimSuffix(filepath.Base(rel), filepath.Ext(rel))
	var callables, classes, others []declSpan
	span := func(sy docSymbol, name string) declSpan {
		return declSpan{start: sy.Range.Start.Line + 1, end: sy.Range.End.Line + 1, name: name}
	}
	add := func(stratum, recv string, sy docSymbol) {
		if strings.HasPrefix(sy.Name, "__") && strings.HasSuffix(sy.Name, "__") || sy.Name == "constructor" {
			return // called by the language's syntax, not by name
		}
		cands[stratum] = append(cands[stratum], target{stratum: stratum, rel: rel, pkg: stem, recv: recv,
			name: sy.Name, line: sy.SelectionRange.Start.Line + 1, col: sy.SelectionRange.Start.Character})
	}
	generic := func(sy docSymbol) bool {
		p := sy.SelectionRange.End
		return p.Line < len(lines) && p.Character < len(lines[p.Line]) && lines[p.Line][p.Character] == '<'
	}
	var walkClass func(owner docSymbol)
	walkClass = func(owner docSymbol) {
		classes = append(classes, span(owner, owner.Name))
		for _, m := range owner.Children {
			switch m.Kind {
			case kindClass, kindInterface:
				walkClass(m)
			case kindMethod, kindFunction, kindProperty, kindConstructor:
				if m.Range.End.Line > m.Range.Start.Line || m.Kind != kindProperty {
					callables = append(callables, span(m, owner.Name+"."+m.Name))
				}
				if m.Kind != kindMethod && m.Kind != kindFunction {
					continue
				}
				switch {
				case owner.Kind == kindInterface:
					add("interface", owner.Name, m)
				case lang == "typescript" && generic(m):
					add("generic", owner.Name, m)
				case commonMethodNames[m.Name]:
					add("common", owner.Name, m)
				default:
					add("method", owner.Name, m)
				}
			}
		}
	}
	for _, sy := range syms {
		switch sy.Kind {
		case kindClass, kindInterface:
			walkClass(sy)
		case kindFunction:
			callables = append(callables, span(sy, sy.Name))
			if lang == "typescript" && generic(sy) {
				add("generic", "", sy)
			} else {
				add("func", "", sy)
			}
		default:
			others = append(others, span(sy, sy.Name))
		}
	}
	return fileIndex{decls: append(append(callables, classes...), others...)}, nil
}

func (s *lsp) open(root, rel, langID string) error {
	src, err := os.ReadFile(filepath.Join(root, rel)) //nolint:gosec // G304: a file of the copied corpus
	if err != nil {
		return err
	}
	return s.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": fileURI(filepath.Join(root, rel)), "languageId": langID, "version": 1, "text": string(src)}})
}

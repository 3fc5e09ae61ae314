package codegraph

import (
	"path"
	"strings"
	"sync"
	"unsafe"

	tskotlin "github.com/tree-sitter-grammars/tree-sitter-kotlin/bindings/go"
	ts "github.com/tree-sitter/go-tree-sitter"
	tsbash "github.com/tree-sitter/tree-sitter-bash/bindings/go"
	tscsharp "github.com/tree-sitter/tree-sitter-c-sharp/bindings/go"
	tsc "github.com/tree-sitter/tree-sitter-c/bindings/go"
	tscpp "github.com/tree-sitter/tree-sitter-cpp/bindings/go"
	tsgo "github.com/tree-sitter/tree-sitter-go/bindings/go"
	tsjava "github.com/tree-sitter/tree-sitter-java/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tsphp "github.com/tree-sitter/tree-sitter-php/bindings/go"
	tspy "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsruby "github.com/tree-sitter/tree-sitter-ruby/bindings/go"
	tsrust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// language is one grammar the graph parses, with the query that pulls
// definitions and references out of its trees.
type language struct {
	name   string // go, python, javascript, typescript, tsx, rust, java, c, cpp, csharp, ruby, php, kotlin, bash
	family string // languages whose files may reference each other's definitions
	raw    func() unsafe.Pointer
	query  string
	// stop lists identifiers that are never worth a reference (keywords the
	// grammar reports as identifiers, the receiver of a method).
	stop map[string]bool

	once  sync.Once
	lang  *ts.Language
	q     *ts.Query
	qerr  error
	names []string // capture names by index
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var languages = map[string]*language{
	"go":         {name: "go", family: "go", raw: tsgo.Language, query: goQuery, stop: words("_ nil true false iota err")},
	"python":     {name: "python", family: "python", raw: tspy.Language, query: pythonQuery + pythonImportSkips, stop: words("self cls None True False")},
	"javascript": {name: "javascript", family: "js", raw: tsjs.Language, query: jsQuery + tsImportSkips, stop: words("undefined this")},
	"typescript": {name: "typescript", family: "js", raw: tsts.LanguageTypescript, query: tsQuery + tsImportSkips, stop: words("undefined this")},
	"tsx":        {name: "tsx", family: "js", raw: tsts.LanguageTSX, query: tsQuery + tsImportSkips, stop: words("undefined this")},
	"rust":       {name: "rust", family: "rust", raw: tsrust.Language, query: rustQuery, stop: words("self Self crate super")},
	"java":       {name: "java", family: "java", raw: tsjava.Language, query: javaQuery, stop: words("this super")},
	"c":          {name: "c", family: "c", raw: tsc.Language, query: cQuery, stop: words("NULL true false")},
	"cpp":        {name: "cpp", family: "c", raw: tscpp.Language, query: cppQuery, stop: words("NULL nullptr true false this")},
	"csharp":     {name: "csharp", family: "csharp", raw: tscsharp.Language, query: csharpQuery, stop: words("this base null true false var")},
	"ruby":       {name: "ruby", family: "ruby", raw: tsruby.Language, query: rubyQuery, stop: words("self nil true false")},
	"php":        {name: "php", family: "php", raw: tsphp.LanguagePHP, query: phpQuery, stop: words("this self parent static null true false")},
	"kotlin":     {name: "kotlin", family: "kotlin", raw: tskotlin.Language, query: kotlinQuery, stop: words("this super null true false it")},
	"bash":       {name: "bash", family: "bash", raw: tsbash.Language, query: bashQuery},
}

var extensions = map[string]string{
	".go":   "go",
	".py":   "python",
	".pyi":  "python",
	".js":   "javascript",
	".jsx":  "javascript",
	".mjs":  "javascript",
	".cjs":  "javascript",
	".ts":   "typescript",
	".mts":  "typescript",
	".cts":  "typescript",
	".tsx":  "tsx",
	".rs":   "rust",
	".java": "java",
	".c":    "c",
	// A header may be C or C++; the C++ grammar reads both.
	".h":       "cpp",
	".cc":      "cpp",
	".cpp":     "cpp",
	".cxx":     "cpp",
	".hh":      "cpp",
	".hpp":     "cpp",
	".hxx":     "cpp",
	".cs":      "csharp",
	".rb":      "ruby",
	".rake":    "ruby",
	".gemspec": "ruby",
	".php":     "php",
	".kt":      "kotlin",
	".kts":     "kotlin",
	".sh":      "bash",
	".bash":    "bash",
}

// languageOf names the language of a path, "" when the graph does not parse it.
func languageOf(p string) string {
	if strings.HasSuffix(p, ".d.ts") {
		return "typescript"
	}
	return extensions[strings.ToLower(path.Ext(p))]
}

// load compiles the grammar's query once; a query that does not compile is
// a programming error reported on every parse of that language.
func (l *language) load() error {
	l.once.Do(func() {
		l.lang = ts.NewLanguage(l.raw())
		q, qerr := ts.NewQuery(l.lang, l.query)
		if qerr != nil {
			l.qerr = qerr
			return
		}
		l.q = q
		l.names = q.CaptureNames()
	})
	return l.qerr
}

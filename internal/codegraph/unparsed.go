package codegraph

import (
	"fmt"
	"os"
	"path"
)

// langNames is how a result names the languages the graph parses.
const langNames = "Go, Python, JavaScript, TypeScript (.ts, .tsx), Rust, Java, C, C++, C#, Ruby, PHP, Kotlin and Bash"

// unparsedFile answers a graph tool narrowed to one file in a language the
// graph does not parse: one line saying so, where an empty answer would
// read as "this file defines nothing".
func (e *Env) unparsedFile(t target) (Result, bool) {
	if t.scope == "" || languageOf(t.scope) != "" {
		return Result{}, false
	}
	if st, err := os.Stat(t.fs); err != nil || st.IsDir() {
		return Result{}, false
	}
	shown := e.rel(t.fs)
	what := "files like " + path.Base(t.scope)
	if ext := path.Ext(t.scope); ext != "" {
		what = ext + " files"
	}
	text := fmt.Sprintf("%s: the code graph does not parse %s (it parses %s); code_search finds text in it and file_read reads it.",
		shown, what, langNames)
	return Result{Text: text, Meta: map[string]any{"repository": t.name, "path": shown, "hits": 0}}, true
}

// Package codegraph is the structural code graph behind code_map,
// code_find, code_outline, code_callers and code_search mode symbols: our
// own engine in the place of the spec's Graft (ADR 0703).
//
// Files of a repository under /home/agent/repos are parsed with
// tree-sitter (Go, Python, JavaScript, TypeScript, TSX, Rust, Java, C,
// C++, C#, Ruby, PHP, Kotlin, Bash) into
// definitions, references and typed locals; references resolve to
// definitions by name, ranked (imports, declared types, containers,
// folders). The graph is stored per repository under
// /home/agent/.cache/graft/<name> and refreshed against the working tree
// before every query, re-parsing only the files whose content changed and
// writing nothing into the repository.
//
// Each query takes an Env (the home, the working directory, the result
// cap, and the helper's path confinement) and the tool's JSON arguments,
// and returns the text the model sees with the call's metadata.
package codegraph

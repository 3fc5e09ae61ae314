package codegraph

// The names an import or a re-export statement lists are bindings, not
// uses: a caller of a function is whoever calls it, not every file that
// imports it (issue 37, measured against pyright and tsserver).
const (
	pythonImportSkips = `
(import_statement) @skip
(import_from_statement) @skip
`
	tsImportSkips = `
(import_statement) @skip
(export_statement source: (_)) @skip
(export_statement (export_clause) @skip)
`
)

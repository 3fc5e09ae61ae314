// Package inputs is the operator's inbox of input that MCP servers ask for in
// the middle of a tool call: a form (elicitation/create, or an input request
// of an input_required result) or a link to open (URL mode). A call whose
// catalog row sends forms to a person records a request here and waits for
// the answer, woken by a PostgreSQL notification (docs/adr/0515).
//
// It owns the table input_requests. An accepted form's content is checked
// against the schema the server sent before it is stored, is held only until
// the waiting call takes it, and is never logged.
package inputs

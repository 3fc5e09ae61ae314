package scripts

import (
	"encoding/json"

	"github.com/guilds/guilds/internal/tools"
)

func (h *handlers) decls() []tools.Tool {
	return []tools.Tool{{
		Name: ToolCreate, Class: tools.ClassScript, Idempotent: true, Handler: h.create,
		Description: "Save a small Python 3 program you can run again with script_run: it reads its arguments as one JSON object " +
			"on stdin and prints its result. Creating an existing name replaces that script. With parameters (a JSON Schema of " +
			"that object) the script is also offered as a tool of its own from your next run.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"name":{"type":"string","description":"lowercase letters, digits, _ and -, starting with a letter (at most 63), e.g. fetch_rates"},
			"description":{"type":"string","description":"what the script does, one line (at most 400 characters)"},
			"source":{"type":"string","description":"the whole Python 3 program"},
			"parameters":{"type":"object","description":"optional JSON Schema (type object) of the arguments the script reads from stdin"}},
			"required":["name","description","source"],"additionalProperties":false}`),
	}, {
		Name: ToolList, Class: tools.ClassScript, Idempotent: true, Handler: h.list,
		Description: "List your scripts with their descriptions, and whether this run runs them as saved.",
		Schema:      json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
	}, {
		Name: ToolRead, Class: tools.ClassScript, Idempotent: true, Handler: h.read,
		Description: "Read one script's source, as this run runs it.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"name":{"type":"string","description":"the script's name"}},
			"required":["name"],"additionalProperties":false}`),
	}, {
		Name: ToolRun, Class: RunClass, Handler: h.run,
		Description: "Run one of your scripts in your workspace (from /home/agent, stopped after 120 seconds with exit_code: 124). " +
			"arguments is written to its stdin as JSON ({} without it). The result is its combined stdout and stderr, " +
			"shaped like shell's, then exit_code: N when not 0 and the time it took.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"name":{"type":"string","description":"the script's name"},
			"arguments":{"type":"object","description":"the JSON object the script reads from stdin"}},
			"required":["name"],"additionalProperties":false}`),
	}, {
		Name: ToolDelete, Class: tools.ClassScript, Handler: h.delete,
		Description: "Delete one of your scripts: its saved copy, its file in your workspace and its place in this run.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"name":{"type":"string","description":"the script's name"}},
			"required":["name"],"additionalProperties":false}`),
	}}
}

package scripts

import (
	"encoding/json"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// RunArgs turns the arguments of a call to a script offered as a tool into
// script_run's: they are validated against the script's parameters as any
// tool's are (an *tools.ArgumentError listing every problem), then passed
// as the arguments object its stdin gets.
func RunArgs(offered runs.OfferedTool, args json.RawMessage) (json.RawMessage, error) {
	schema, err := tools.CompileSchema(offered.Schema)
	if err != nil {
		return nil, err
	}
	prepared, err := schema.Prepare(args)
	if err != nil {
		return nil, err
	}
	name := offered.RemoteName
	if name == "" {
		name = offered.Name
	}
	return json.Marshal(map[string]any{"name": name, "arguments": prepared})
}

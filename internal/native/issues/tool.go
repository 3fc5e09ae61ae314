package issues

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// ToolName is the model-facing name of the tool.
const ToolName = "report_issue"

var schema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "kind": {"type": "string", "enum": ["tool_failure", "truncated", "api", "other"],
      "description": "tool_failure: a tool errored or misbehaved; truncated: a result was cut; api: a remote service failed; other"},
    "summary": {"type": "string", "minLength": 1, "maxLength": 300, "description": "One line the operators read in their inbox"},
    "detail": {"type": "string", "maxLength": 8000, "description": "What you called, what came back, what you expected"}
  },
  "required": ["kind", "summary"],
  "additionalProperties": false
}`)

// Tool returns report_issue writing to db. Every run offers it.
func Tool(db store.DB) tools.Tool {
	return tools.Tool{
		Name:        ToolName,
		Description: "Tell the guild's operators about a problem with your tools (a failing tool, a cut result, a broken remote API). Use it when a tool keeps failing, then carry on with the task as best you can.",
		Schema:      schema,
		Class:       tools.ClassDefault,
		Handler: func(ctx context.Context, call tools.Call) (string, error) {
			var in struct {
				Kind, Summary, Detail string
			}
			if err := json.Unmarshal(call.Args, &in); err != nil {
				return "", fmt.Errorf("arguments: %w", err)
			}
			if call.GuildID == "" {
				return "", errors.New("report_issue needs a run of an agent in a guild")
			}
			iss, err := File(ctx, db, New{GuildID: call.GuildID, AgentID: call.AgentID, RunID: call.RunID,
				Kind: in.Kind, Summary: in.Summary, Detail: in.Detail})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("filed issue %s on the guild; the operators will see it in their inbox", iss.ID), nil
		},
	}
}

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "issues", Group: "Issues", Gate: tools.GateAlways}

// Register adds report_issue to reg.
func Register(reg *tools.Registry, db store.DB) { reg.Family(listing).Register(Tool(db)) }

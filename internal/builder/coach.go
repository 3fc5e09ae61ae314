package builder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Searcher searches the organisation's Notion login through the platform's
// call path (redacted like any tool result); ErrNoNotion when it has none.
type Searcher func(ctx context.Context, orgID, query string) (string, error)

// ErrNoNotion: the organisation holds no connected Notion login.
var ErrNoNotion = errors.New("the organisation has no connected Notion login; connect one on its Tools tab to search it")

// Coach drafts guilds with a model and the builder tools.
type Coach struct {
	Models *models.Resolver
	Integ  *integrations.Registry
	Search Searcher // nil: the search tool says there is no Notion login
	// MaxTurns bounds the model turns of one draft (8 when zero).
	MaxTurns int
}

// Step is one builder tool the coach used, shown to the operator beside the
// draft. Its result is what the model read, already redacted.
type Step struct {
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	Result    string `json:"result"`
}

// Advice is the coach's draft and how it got there.
type Advice struct {
	Proposal Proposal `json:"proposal"`
	Steps    []Step   `json:"steps"`
	Model    string   `json:"model"`
}

// ErrNoProposal: the model ended without proposing a guild.
type ErrNoProposal struct{ Said string }

func (e *ErrNoProposal) Error() string {
	if e.Said == "" {
		return "the coach ended without proposing a guild; describe the job again, with more detail"
	}
	return "the coach ended without proposing a guild; it said: " + e.Said
}

// Builder tools' names.
const (
	ToolServers = "list_published_servers"
	ToolLogins  = "list_logins"
	ToolNotion  = "search_notion"
	ToolPropose = "propose_guild"
)

const coachPrompt = `You help an operator set up a guild: a team of AI agents that share a job.
Read the job the operator describes. Look at what the platform offers with list_published_servers and at the logins the organisation already holds with list_logins; when the job keeps records, search_notion finds the organisation's existing Notion pages and databases an agent should use.
Then call propose_guild once with the guild, its agents (each with a clear prompt that names its task, its tools and any Notion database it should use) and the tool switches: turn on only the servers and tools each agent needs. Name only servers and tools list_published_servers lists.`

var switchSchema = `{"type":"object","properties":{
  "server":{"type":"string","description":"a published server's slug"},
  "tool":{"type":"string","description":"one of its published tools; omit to switch the whole server"},
  "on":{"type":"boolean"}},"required":["server","on"],"additionalProperties":false}`

var builderTools = []models.Tool{
	{Type: "function", Function: models.FunctionSpec{Name: ToolServers,
		Description: "List the published servers and their published tools: the only ones a guild may switch on.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}},
	{Type: "function", Function: models.FunctionSpec{Name: ToolLogins,
		Description: "List the organisation's logins: which servers it is connected to, and as whom.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}},
	{Type: "function", Function: models.FunctionSpec{Name: ToolNotion,
		Description: "Search the organisation's Notion login for pages and databases by words.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1}},"required":["query"],"additionalProperties":false}`)}},
	{Type: "function", Function: models.FunctionSpec{Name: ToolPropose,
		Description: "Propose the guild. The operator reviews and edits it before anything is created.",
		Parameters: json.RawMessage(`{"type":"object","properties":{
  "guild":{"type":"object","properties":{"name":{"type":"string"},"description":{"type":"string"}},"required":["name"]},
  "agents":{"type":"array","items":{"type":"object","properties":{
    "name":{"type":"string"},"prompt":{"type":"string"},"switches":{"type":"array","items":` + switchSchema + `}},
    "required":["name","prompt"]}},
  "switches":{"type":"array","description":"switches for every agent of the guild","items":` + switchSchema + `},
  "why":{"type":"string","description":"a few sentences to the operator on the choices"}},
  "required":["guild","agents"]}`)}},
}

// Propose runs the coach on a job for an organisation the principal sees.
func (c *Coach) Propose(ctx context.Context, db store.DB, p access.Principal, orgID, job string) (Advice, error) {
	job = strings.TrimSpace(job)
	var probs validation.Problems
	probs.Check(job != "", "job", "is required: describe what the guild should do")
	probs.Check(len(job) <= 8000, "job", "must be at most 8000 characters")
	if _, err := orgs.GetOrg(ctx, db, p, orgID); err != nil {
		return Advice{}, err
	}
	if err := probs.Err(); err != nil {
		return Advice{}, err
	}
	target, err := c.Models.Resolve(ctx, db, orgID, "")
	if err != nil {
		return Advice{}, err
	}
	published, err := Published(ctx, db, c.Integ)
	if err != nil {
		return Advice{}, err
	}
	adv := Advice{Steps: []Step{}, Model: target.Qualified()}
	msgs := []models.Message{{Role: "system", Content: coachPrompt}, {Role: "user", Content: job}}
	turns := c.MaxTurns
	if turns <= 0 {
		turns = 8
	}
	for range turns {
		resp, err := c.Models.Complete(ctx, target, models.Request{Messages: msgs, Tools: builderTools})
		if err != nil {
			return Advice{}, err
		}
		if len(resp.ToolCalls) == 0 {
			return Advice{}, &ErrNoProposal{Said: resp.Content}
		}
		msgs = append(msgs, models.Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls})
		for _, tc := range resp.ToolCalls {
			if tc.Function.Name == ToolPropose {
				var pr Proposal
				err := json.Unmarshal([]byte(tc.Function.Arguments), &pr)
				if err == nil {
					err = pr.Check(published)
				}
				if err == nil {
					adv.Proposal = pr
					return adv, nil
				}
				msgs = append(msgs, models.Message{Role: "tool", ToolCallID: tc.ID, Content: "ERROR: " + err.Error() + "; fix the proposal and call propose_guild again"})
				continue
			}
			result := c.use(ctx, db, p, orgID, published, tc)
			adv.Steps = append(adv.Steps, Step{Tool: tc.Function.Name, Arguments: tc.Function.Arguments, Result: result})
			msgs = append(msgs, models.Message{Role: "tool", ToolCallID: tc.ID, Content: result})
		}
	}
	return Advice{}, &ErrNoProposal{Said: fmt.Sprintf("no proposal after %d turns", turns)}
}

// use runs one builder tool other than propose_guild.
func (c *Coach) use(ctx context.Context, db store.DB, p access.Principal, orgID string, published []PublishedServer, tc models.ToolCall) string {
	switch tc.Function.Name {
	case ToolServers:
		return asJSON(published)
	case ToolLogins:
		logins, err := connections.ListConnections(ctx, db, p, grants.ScopeOrganisation, orgID)
		if err != nil {
			return "ERROR: the logins cannot be read"
		}
		type login struct {
			Server      string `json:"server"`
			Name        string `json:"name"`
			Status      string `json:"status"`
			AccountHint string `json:"account_hint,omitempty"`
		}
		out := []login{}
		for _, l := range logins {
			out = append(out, login{Server: l.ServerSlug, Name: l.ServerName, Status: string(l.Status), AccountHint: l.AccountHint})
		}
		return asJSON(out)
	case ToolNotion:
		var in struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal([]byte(tc.Function.Arguments), &in); err != nil || strings.TrimSpace(in.Query) == "" {
			return "ERROR: search_notion takes {\"query\": \"words\"}"
		}
		if c.Search == nil {
			return "ERROR: " + ErrNoNotion.Error()
		}
		out, err := c.Search(ctx, orgID, in.Query)
		if err != nil {
			return "ERROR: " + err.Error()
		}
		return out
	}
	return "ERROR: no builder tool is named " + tc.Function.Name
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

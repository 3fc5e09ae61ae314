package records

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Deps are what the record tools need.
type Deps struct {
	DB  *pgxpool.Pool
	Log *slog.Logger
}

// Tool names.
const (
	ToolSearch = "record_search"
	ToolList   = "record_list"
	ToolAdd    = "record_add"
	ToolUpdate = "record_update"
	ToolRemove = "record_remove"
)

// Names lists the record tools.
var Names = []string{ToolSearch, ToolList, ToolAdd, ToolUpdate, ToolRemove}

const whereSchema = `{"type":"object","description":"column: term. Text and text_array columns match a substring or a similar spelling; enum columns, booleans and ids match exactly; numbers and datetimes exactly or by {\"gte\":…,\"lte\":…}; null matches a missing value.","additionalProperties":true}`

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "records", Group: "Records", Gate: tools.GateBinding}

// Register adds the five record tools to reg.
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	h := &handlers{d: d}
	fam.Register(tools.Tool{
		Name: ToolSearch,
		Description: "Search the records of your organisation's collections for words in any column. " +
			`Grammar: words all match; "quoted phrase"; or between alternatives; -word excludes. A single word also matches inside longer words. ` +
			"Without collection it searches every collection you can read; with one, where can filter its columns. " +
			"Naming a collection you cannot use answers with the ones you can.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"query":{"type":"string","description":"what to look for"},
			"collection":{"type":"string","description":"only this collection"},
			"where":` + whereSchema + `,
			"limit":{"type":"integer","minimum":1,"maximum":100}},
			"required":["query"],"additionalProperties":false}`),
		Handler: h.search, Idempotent: true, Quick: true,
	})
	fam.Register(tools.Tool{
		Name: ToolList,
		Description: "List the records of one collection, optionally filtered by where (at most 8 terms), changed since a time " +
			"(oldest change first), ordered by a column, paged with limit (default 20, at most 100) and offset. Returns {total, records}.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"collection":{"type":"string"},
			"where":` + whereSchema + `,
			"since":{"type":"string","description":"ISO 8601 timestamp: only records changed at or after it"},
			"order":{"type":"object","properties":{
				"column":{"type":"string","description":"a declared column that is not an array, or id, created_at, updated_at"},
				"direction":{"type":"string","enum":["asc","desc"]}},"required":["column"],"additionalProperties":false},
			"limit":{"type":"integer","minimum":1,"maximum":100},
			"offset":{"type":"integer","minimum":0}},
			"required":["collection"],"additionalProperties":false}`),
		Handler: h.list, Idempotent: true, Quick: true,
	})
	fam.Register(tools.Tool{
		Name: ToolAdd,
		Description: "Add a record to a collection. body holds declared columns only; every value is checked and all problems are reported at once. " +
			"When the collection's unique column matches a live record, the body is merged into that record instead.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"collection":{"type":"string"},
			"body":{"type":"object","description":"column: value"}},
			"required":["collection","body"],"additionalProperties":false}`),
		Handler: h.add,
	})
	fam.Register(tools.Tool{
		Name:        ToolUpdate,
		Description: "Change some columns of one record; null clears an optional column. Returns {record, warnings?}.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"collection":{"type":"string"},
			"id":{"type":"string","description":"the record's id"},
			"body":{"type":"object","description":"column: new value, or null to clear"}},
			"required":["collection","id","body"],"additionalProperties":false}`),
		Handler: h.update, Idempotent: true, Quick: true,
	})
	fam.Register(tools.Tool{
		Name:        ToolRemove,
		Description: "Remove one record of a collection by id.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"collection":{"type":"string"},
			"id":{"type":"string"}},
			"required":["collection","id"],"additionalProperties":false}`),
		Handler: h.remove, Idempotent: true, Quick: true,
	})
}

type handlers struct{ d Deps }

// agent loads who the call acts for; the organisation and guild come from
// the database, not from the call, so a call cannot reach another tenant.
func (h *handlers) agent(ctx context.Context, call tools.Call) (Agent, error) {
	if call.AgentID == "" {
		return Agent{}, errors.New("record tools need an agent: this call has no agent id")
	}
	a, err := orgs.LoadAgent(ctx, h.d.DB, call.AgentID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Agent{}, artifacts.Errorf(http.StatusNotFound, "agent %s not found", call.AgentID)
		}
		return Agent{}, err
	}
	return Agent{ID: a.ID, GuildID: a.GuildID, OrgID: a.OrganisationID}, nil
}

func reply(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func (h *handlers) search(ctx context.Context, call tools.Call) (string, error) {
	var in struct {
		Query      string                     `json:"query"`
		Collection string                     `json:"collection"`
		Where      map[string]json.RawMessage `json:"where"`
		Limit      int                        `json:"limit"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", err
	}
	if len(in.Where) > 0 && in.Collection == "" {
		return "", bad("collection", "where needs collection: name the collection whose columns it filters")
	}
	a, err := h.agent(ctx, call)
	if err != nil {
		return "", err
	}
	var colls []Collection
	if in.Collection != "" {
		c, err := Open(ctx, h.d.DB, a, in.Collection, AccessRead)
		if err != nil {
			return "", err
		}
		colls = []Collection{c}
	} else if colls, _, err = Reachable(ctx, h.d.DB, a); err != nil {
		return "", err
	}
	recs, err := Search(ctx, h.d.DB, colls, SearchQuery{Query: in.Query, Where: in.Where, Limit: in.Limit})
	if err != nil {
		return "", err
	}
	return reply(map[string]any{"records": recs})
}

func (h *handlers) list(ctx context.Context, call tools.Call) (string, error) {
	var in struct {
		Collection string `json:"collection"`
		ListQuery
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", err
	}
	a, err := h.agent(ctx, call)
	if err != nil {
		return "", err
	}
	c, err := Open(ctx, h.d.DB, a, in.Collection, AccessRead)
	if err != nil {
		return "", err
	}
	res, err := List(ctx, h.d.DB, c, in.ListQuery)
	if err != nil {
		return "", err
	}
	return reply(res)
}

// write runs fn on a collection opened for writing, in one transaction.
func (h *handlers) write(ctx context.Context, call tools.Call, name string, fn func(tx pgx.Tx, c Collection) (any, error)) (string, error) {
	a, err := h.agent(ctx, call)
	if err != nil {
		return "", err
	}
	var out any
	err = store.InTx(ctx, h.d.DB, func(tx pgx.Tx) error {
		c, err := Open(ctx, tx, a, name, AccessWrite)
		if err != nil {
			return err
		}
		out, err = fn(tx, c)
		return err
	})
	if err != nil {
		return "", err
	}
	return reply(out)
}

func (h *handlers) add(ctx context.Context, call tools.Call) (string, error) {
	var in struct {
		Collection string `json:"collection"`
		Body       Body   `json:"body"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", err
	}
	return h.write(ctx, call, in.Collection, func(tx pgx.Tx, c Collection) (any, error) {
		res, err := Add(ctx, tx, c, in.Body)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"record": res.Record}
		if res.MergedInto != "" {
			out["note"] = "merged into existing record " + res.MergedInto
		}
		return out, nil
	})
}

func (h *handlers) update(ctx context.Context, call tools.Call) (string, error) {
	var in struct {
		Collection string `json:"collection"`
		ID         string `json:"id"`
		Body       Body   `json:"body"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", err
	}
	return h.write(ctx, call, in.Collection, func(tx pgx.Tx, c Collection) (any, error) {
		return Update(ctx, tx, c, in.ID, in.Body)
	})
}

func (h *handlers) remove(ctx context.Context, call tools.Call) (string, error) {
	var in struct {
		Collection string `json:"collection"`
		ID         string `json:"id"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", err
	}
	return h.write(ctx, call, in.Collection, func(tx pgx.Tx, c Collection) (any, error) {
		if err := Remove(ctx, tx, c, in.ID); err != nil {
			return nil, err
		}
		return map[string]any{"removed": map[string]string{"collection": c.Name, "id": in.ID}}, nil
	})
}

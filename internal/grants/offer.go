package grants

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Trigger is what started a run.
type Trigger = tools.Trigger

// Run triggers.
const (
	TriggerDirect   = tools.TriggerDirect
	TriggerGroup    = tools.TriggerGroup
	TriggerSchedule = tools.TriggerSchedule
)

// OfferedTool is one tool a run offers.
type OfferedTool struct {
	Name         string          `json:"name"` // model-facing name
	Kind         string          `json:"kind"` // "native" or "mcp"
	Description  string          `json:"description"`
	Schema       json.RawMessage `json:"schema"`        // original schema, for argument validation
	ShapedSchema json.RawMessage `json:"shaped_schema"` // model-facing
	ConnectionID string          `json:"connection_id,omitempty"`
	ServerSlug   string          `json:"server_slug,omitempty"`
	RemoteName   string          `json:"remote_name,omitempty"`
	Class        tools.Class     `json:"class"`
}

// Offer is what a run offers.
type Offer struct {
	Tools    []OfferedTool `json:"tools"`
	Warnings []string      `json:"warnings"`
	Memory   bool          `json:"memory"` // memory_write is offered
}

// ErrConnectionDisconnected stops a run start: a server the agent is granted
// resolves to a login that is disconnected.
type ErrConnectionDisconnected struct {
	ServerSlug, ServerName, ConnectionID string
}

func (e *ErrConnectionDisconnected) Error() string {
	return fmt.Sprintf("the %s login this agent uses is disconnected; reconnect it or turn %s off", e.ServerName, e.ServerName)
}

// StoredTool is one tool a connection listed.
type StoredTool struct {
	RemoteName  string          `json:"remote_name"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
}

// ServerLogin is a server the chain mentions with the login it resolved to.
type ServerLogin struct {
	ServerID, Slug, Name string
	Kind                 catalog.Kind
	// ConnectionStatus is empty when the chain names no login.
	ConnectionID     string
	ConnectionStatus connstore.Status
	Tools            []StoredTool
}

// OfferInputs are everything a run offer depends on.
type OfferInputs struct {
	Resolved     Resolved
	Servers      []ServerLogin // servers of the chain with their resolved login
	Config       orgs.AgentConfig
	Trigger      Trigger
	Integrations *integrations.Registry
	// Registry holds the native tools: their implementations and, in their
	// listings, the native catalog.
	Registry *tools.Registry
	// Shape shapes a listed tool's schema; nil means tools.Shape.
	Shape func(json.RawMessage) (json.RawMessage, error)
}

// nativeOffered decides one native tool of the catalog; reason says why it
// is not offered.
func nativeOffered(n NativeTool, res Resolved, cfg orgs.AgentConfig, trig Trigger, integ *integrations.Registry) (bool, string) {
	switch n.Gate {
	case GateAlways:
		return true, ""
	case GateBrowser:
		return cfg.Browser, "the agent's browser setting is off"
	case GateCoding:
		return cfg.Coding, "the agent's coding setting is off"
	}
	if !res.Native[n.Name].Enabled {
		return false, "turned off"
	}
	switch n.Flag {
	case "memory":
		if !cfg.Memory {
			return false, "the agent's memory setting is off"
		}
	case "scripting":
		if !cfg.Scripting {
			return false, "the agent's scripting setting is off"
		}
	}
	if n.Triggers != nil {
		ok := false
		for _, t := range n.Triggers {
			ok = ok || t == trig
		}
		if !ok {
			return false, fmt.Sprintf("not offered on %s runs", trig)
		}
	}
	if n.Integration != "" && (integ == nil || !integ.On(n.Integration)) {
		return false, "the box has no " + n.Integration + " integration"
	}
	return true, ""
}

// BuildOffer computes what a run offers. It reads nothing but its inputs:
// native tools in catalog order, then the enabled listed tools of each
// connected login, by server slug and tool name.
func BuildOffer(in OfferInputs) (Offer, error) {
	return buildOffer(in, catalogOf(in.Registry))
}

func buildOffer(in OfferInputs, native nativeCatalog) (Offer, error) {
	out := Offer{Tools: []OfferedTool{}, Warnings: []string{}}
	for _, n := range native.tools {
		ok, _ := nativeOffered(n, in.Resolved, in.Config, in.Trigger, in.Integrations)
		if !ok {
			continue
		}
		offers := in.Registry.Offers(n.Name)
		if len(offers) != 1 {
			continue
		}
		out.Tools = append(out.Tools, OfferedTool{Name: n.Name, Kind: "native", Description: offers[0].Description,
			Schema: offers[0].Schema, ShapedSchema: offers[0].Shaped, Class: n.Class})
		if n.Name == "memory_write" {
			out.Memory = true
		}
	}
	shape := in.Shape
	if shape == nil {
		shape = func(s json.RawMessage) (json.RawMessage, error) {
			out, _, err := tools.Shape(s)
			return out, err
		}
	}
	servers := append([]ServerLogin(nil), in.Servers...)
	sort.Slice(servers, func(i, j int) bool { return servers[i].Slug < servers[j].Slug })
	seen := map[string]bool{}
	for _, s := range servers {
		if s.Kind == catalog.KindGitHub || !in.Resolved.Servers[s.ServerID].Enabled {
			continue
		}
		switch s.ConnectionStatus {
		case connstore.StatusDisconnected:
			return Offer{}, &ErrConnectionDisconnected{ServerSlug: s.Slug, ServerName: s.Name, ConnectionID: s.ConnectionID}
		case "":
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s is on but no login is connected for this agent", s.Name))
			continue
		case connstore.StatusPending:
			continue
		}
		class := tools.ClassMCP
		if s.Kind == catalog.KindAdapter {
			class = tools.ClassAdapter
		}
		list := append([]StoredTool(nil), s.Tools...)
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
		for _, t := range list {
			if on, _ := in.Resolved.ToolState(s.ServerID, t.Name); !on {
				continue
			}
			// A listed tool never takes a native tool's name, offered or not
			// (an admin server slugged "note" listing "get" would pose as note_get).
			if _, isNative := native.lookup(t.Name); isNative {
				out.Warnings = append(out.Warnings, fmt.Sprintf("tool %q of %s left out: a native tool has that name", t.Name, s.Name))
				continue
			}
			if !tools.ValidName(t.Name) || seen[t.Name] {
				out.Warnings = append(out.Warnings, fmt.Sprintf("tool %q of %s left out: not a valid or unique tool name", t.Name, s.Name))
				continue
			}
			shaped, err := shape(t.Schema)
			if err != nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("tool %q of %s left out: %s", t.Name, s.Name, schemaProblem(err)))
				continue
			}
			seen[t.Name] = true
			out.Tools = append(out.Tools, OfferedTool{Name: t.Name, Kind: "mcp", Description: t.Description,
				Schema: t.Schema, ShapedSchema: shaped, ConnectionID: s.ConnectionID, ServerSlug: s.Slug,
				RemoteName: t.RemoteName, Class: class})
		}
	}
	return out, nil
}

// schemaProblem says why a listed tool's schema keeps it from every offer;
// the Tools view shows the same words beside the tool.
func schemaProblem(err error) string {
	return "never offered to a model: its input schema cannot be offered (" + err.Error() + ")"
}

// Service loads the inputs of offers and views.
type Service struct {
	reg    *tools.Registry
	native nativeCatalog // read from reg once: families register at start-up
	integ  *integrations.Registry
	log    *slog.Logger
	cache  shapeCache
}

// NewService builds a Service. reg holds the native tool implementations
// (nil: none in this build); integ is the box's integrations (nil: none on).
func NewService(reg *tools.Registry, integ *integrations.Registry, log *slog.Logger) *Service {
	if reg == nil {
		reg = tools.NewRegistry(tools.WithLogger(log))
	}
	if integ == nil {
		integ = integrations.New(func(string) string { return "" })
	}
	if log == nil {
		log = slog.Default()
	}
	return &Service{reg: reg, native: catalogOf(reg), integ: integ, log: log}
}

// NativeCatalog returns the native tool catalog the service offers from, in
// display order.
func (s *Service) NativeCatalog() []NativeTool { return append([]NativeTool(nil), s.native.tools...) }

// Integrations returns the registry the service asks.
func (s *Service) Integrations() *integrations.Registry { return s.integ }

// Offered resolves what a run of the agent started by trigger offers now, in
// three queries: the agent with its parents, the bindings of its chain, and
// the resolved logins with their listed tools.
func (s *Service) Offered(ctx context.Context, db store.DB, agentID string, trigger Trigger) (Offer, error) {
	if !trigger.Valid() {
		return Offer{}, fmt.Errorf("grants: unknown trigger %q", trigger)
	}
	a, err := orgs.LoadAgent(ctx, db, agentID)
	if err != nil {
		return Offer{}, err
	}
	pl := Place{Scope: ScopeAgent, OrgID: a.OrganisationID, GuildID: a.GuildID, AgentID: a.ID}
	chain, err := loadChain(ctx, db, pl)
	if err != nil {
		return Offer{}, err
	}
	res := Resolve(plainRows(chain))
	servers, err := loadLogins(ctx, db, chain, res)
	if err != nil {
		return Offer{}, err
	}
	offer, err := buildOffer(OfferInputs{Resolved: res, Servers: servers, Config: a.Config, Trigger: trigger,
		Integrations: s.integ, Registry: s.reg, Shape: s.cache.shape}, s.native)
	if err != nil {
		return offer, err
	}
	// Debug only: runs re-resolve their offer every turn, and operators see the
	// warnings where they matter, in the run's snapshot and the Tools view.
	for _, w := range offer.Warnings {
		s.log.DebugContext(ctx, "grants: offer warning", "agent_id", agentID, "warning", w)
	}
	return offer, nil
}

// loadLogins lists the servers the chain mentions with their resolved login
// and that login's listed tools, in one query.
func loadLogins(ctx context.Context, db store.DB, chain []chainRow, res Resolved) ([]ServerLogin, error) {
	byServer := map[string]*ServerLogin{}
	var order []string
	var conns []string
	for _, r := range chain {
		if r.Kind != KindMCP || byServer[r.ServerID] != nil {
			continue
		}
		d := res.Servers[r.ServerID]
		byServer[r.ServerID] = &ServerLogin{ServerID: r.ServerID, Slug: r.ServerSlug, Name: r.ServerName, Kind: r.ServerKind,
			ConnectionID: d.ConnectionID}
		order = append(order, r.ServerID)
		if d.ConnectionID != "" && d.Enabled {
			conns = append(conns, d.ConnectionID)
		}
	}
	if len(conns) > 0 {
		logins, tools, err := connstore.ByIDsWithTools(ctx, db, conns)
		if err != nil {
			return nil, err
		}
		for _, c := range logins {
			s := byServer[c.Server.ID.String()]
			if s == nil || s.ConnectionID != c.ID.String() {
				continue
			}
			s.ConnectionStatus = c.Status
			s.Tools = append(s.Tools, storedTools(tools[c.ID])...)
		}
	}
	out := make([]ServerLogin, 0, len(order))
	for _, id := range order {
		out = append(out, *byServer[id])
	}
	return out, nil
}

// ArtifactGrants resolves where the agent's note tools reach, in two queries.
func ArtifactGrants(ctx context.Context, db store.DB, agentID string) (ArtifactReach, error) {
	a, err := orgs.LoadAgent(ctx, db, agentID)
	if err != nil {
		return ArtifactReach{}, err
	}
	chain, err := loadChain(ctx, db, Place{Scope: ScopeAgent, OrgID: a.OrganisationID, GuildID: a.GuildID, AgentID: a.ID})
	if err != nil {
		return ArtifactReach{}, err
	}
	return Resolve(plainRows(chain)).Reach(), nil
}

// storedTools are a login's stored tools as the offer and the view show them.
func storedTools(in []connstore.StoredTool) []StoredTool {
	out := make([]StoredTool, 0, len(in))
	for _, t := range in {
		out = append(out, StoredTool{RemoteName: t.RemoteName, Name: t.Name, Description: t.Description, Schema: t.Schema})
	}
	return out
}

package grants

import (
	"context"
	"errors"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
)

// Switch is what a scope itself says about an item: inherit (no row), on or off.
type Switch string

const (
	SwitchInherit Switch = "inherit"
	SwitchOn      Switch = "on"
	SwitchOff     Switch = "off"
)

// NativeToolView is one native tool in the Tools view.
type NativeToolView struct {
	Name      string `json:"name"`
	Family    string `json:"family"`
	Group     string `json:"group"`
	Gate      Gate   `json:"gate"`
	Available bool   `json:"available"` // implemented in this build: always, the catalog is what the build registers
	IsBinding bool   `json:"is_binding"`
	// Switch, Enabled and DecidedBy describe the binding (binding tools only).
	Switch    Switch `json:"switch,omitempty"`
	Enabled   bool   `json:"enabled"`
	DecidedBy Scope  `json:"decided_by,omitempty"`
	// Offered says whether a direct run would offer it from this scope (agent
	// flags only count in an agent's view); NotOffered says why not.
	Offered          bool     `json:"offered"`
	NotOffered       string   `json:"not_offered,omitempty"`
	MissingVariables []string `json:"missing_variables,omitempty"`
	// Approval is the approval setting that decides for the tool here, when
	// a scope has one (docs/adr/0514): ask first, or explicitly not.
	Approval *approvals.Effective `json:"approval,omitempty"`
}

// LoginView is the login a server resolves to at a scope.
type LoginView struct {
	ID          string           `json:"id"`
	OwnerScope  Scope            `json:"owner_scope"`
	OwnerID     string           `json:"owner_id,omitempty"`
	Status      connstore.Status `json:"status"`
	AccountHint string           `json:"account_hint"`
	DecidedBy   Scope            `json:"decided_by"`
}

// ServerToolView is one tool of a server in the Tools view.
type ServerToolView struct {
	Name        string `json:"name"`
	RemoteName  string `json:"remote_name"`
	Description string `json:"description"`
	Listed      bool   `json:"listed"` // listed by the login; else catalog copy
	Switch      Switch `json:"switch"`
	Enabled     bool   `json:"enabled"`
	DecidedBy   Scope  `json:"decided_by,omitempty"`
	// Approval: as NativeToolView's.
	Approval *approvals.Effective `json:"approval,omitempty"`
	// Problem says why a listed tool is never offered to a model (its input
	// schema is not a JSON Schema a run can offer), the words of the run's
	// offer warning; "" when it has none.
	Problem string `json:"problem,omitempty"`
}

// ServerView is one catalog server in the Tools view.
type ServerView struct {
	ID               string       `json:"id"`
	Slug             string       `json:"slug"`
	Name             string       `json:"name"`
	Kind             catalog.Kind `json:"kind"`
	Auth             catalog.Auth `json:"auth"`
	OAuthSetupState  string       `json:"oauth_setup_state"`
	SetUp            bool         `json:"set_up"` // false: "Not set up", Connect disabled
	MissingVariables []string     `json:"missing_variables"`
	HasSwitch        bool         `json:"has_switch"` // GitHub has none
	Switch           Switch       `json:"switch"`
	Enabled          bool         `json:"enabled"`
	DecidedBy        Scope        `json:"decided_by,omitempty"`
	Login            *LoginView   `json:"login,omitempty"`
	// OwnLogin is the login owned at this very scope, whatever its status, so
	// the view can show a pending Connect or offer Reconnect; it may differ
	// from Login when a binding names another login.
	OwnLogin *LoginView       `json:"own_login,omitempty"`
	Tools    []ServerToolView `json:"tools"`
	// GitHubRepositories is the GitHub login's repository selection, when it
	// has one (a narrower scope shows the wider login's until it picks its own).
	GitHubRepositories []githubapp.Selected `json:"github_repositories,omitempty"`
}

// ToolsView is the per-scope Tools view.
type ToolsView struct {
	Place   Place            `json:"place"`
	Native  []NativeToolView `json:"native"`
	Servers []ServerView     `json:"servers"`
}

func switchAt(rows []chainRow, scope Scope, kind, key string) Switch {
	for _, r := range rows {
		if r.Scope != scope || r.Kind != kind {
			continue
		}
		k := r.CatalogID
		if kind == KindMCP {
			k = r.ServerID
		}
		if k == key {
			if r.Enabled {
				return SwitchOn
			}
			return SwitchOff
		}
	}
	return SwitchInherit
}

// toolSwitchAt is what a scope says about a listed tool for the login that
// serves its server there: the login's own overlay, else one that names none.
func toolSwitchAt(rows []chainRow, scope Scope, name, login string) Switch {
	sw := SwitchInherit
	for _, r := range rows {
		if r.Scope != scope || r.Kind != KindMCPTool || r.CatalogID != name || !overlayApplies(r.Row, login) {
			continue
		}
		if sw != SwitchInherit && r.ConnectionID == "" {
			continue
		}
		sw = SwitchOff
		if r.Enabled {
			sw = SwitchOn
		}
	}
	return sw
}

// View builds the Tools view of an organisation, guild or agent the principal can see.
func (s *Service) View(ctx context.Context, db store.DB, p access.Principal, scope Scope, id string) (ToolsView, error) {
	pl, err := visiblePlace(ctx, db, p, scope, id)
	if err != nil {
		return ToolsView{}, err
	}
	// Outside an agent only grants, the box and the build decide; the agent flags are assumed on.
	cfg := orgs.AgentConfig{Browser: true, Coding: true, Scripting: true, Memory: true}
	if scope == ScopeAgent {
		a, err := orgs.LoadAgent(ctx, db, pl.AgentID)
		if err != nil {
			return ToolsView{}, err
		}
		cfg = a.Config
	}
	chain, err := loadChain(ctx, db, pl)
	if err != nil {
		return ToolsView{}, err
	}
	res := Resolve(plainRows(chain))
	v := ToolsView{Place: pl, Native: []NativeToolView{}, Servers: []ServerView{}}
	for _, n := range s.native.tools {
		nv := NativeToolView{Name: n.Name, Family: n.Family, Group: n.Group, Gate: n.Gate, Available: true, IsBinding: n.IsBinding()}
		if n.IsBinding() {
			d := res.Native[n.Name]
			nv.Switch, nv.Enabled, nv.DecidedBy = switchAt(chain, scope, KindNativeTool, n.Name), d.Enabled, d.DecidedBy
		}
		nv.Offered, nv.NotOffered = nativeOffered(n, res, cfg, TriggerDirect, s.integ)
		if nv.Offered {
			nv.NotOffered = ""
		}
		if n.Integration != "" && !s.integ.On(n.Integration) {
			if st, ok := s.integ.Get(n.Integration); ok {
				nv.MissingVariables = st.Missing
			}
			if nv.Offered || nv.NotOffered == "turned off" {
				nv.Offered, nv.NotOffered = false, "the box has no "+n.Integration+" integration"
			}
		}
		v.Native = append(v.Native, nv)
	}
	servers, err := ListServers(ctx, db, s.integ, true)
	if err != nil {
		return ToolsView{}, err
	}
	logins, err := s.viewLogins(ctx, db, res)
	if err != nil {
		return ToolsView{}, err
	}
	own, err := ownLogins(ctx, db, pl)
	if err != nil {
		return ToolsView{}, err
	}
	for _, srv := range servers {
		d := res.Servers[srv.ID]
		sv := ServerView{ID: srv.ID, Slug: srv.Slug, Name: srv.Name, Kind: srv.Kind, Auth: srv.Auth,
			OAuthSetupState: srv.OAuthSetupState, SetUp: srv.OAuthSetupState != SetupUnsupported && srv.Available,
			MissingVariables: srv.MissingVariables, HasSwitch: srv.Kind != catalog.KindGitHub,
			Switch: switchAt(chain, scope, KindMCP, srv.ID), Enabled: d.Enabled, DecidedBy: d.DecidedBy, Tools: []ServerToolView{}}
		if l, ok := logins[d.ConnectionID]; ok && d.ConnectionID != "" {
			lv := l.view
			lv.DecidedBy = d.ConnectionFrom
			sv.Login = &lv
			if srv.Kind == catalog.KindGitHub {
				gl, err := githubapp.GetLogin(ctx, db, lv.ID)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return ToolsView{}, err
				}
				sv.GitHubRepositories = gl.Selected
			}
			for _, t := range l.tools {
				sv.Tools = append(sv.Tools, s.toolView(chain, res, scope, srv.ID, t, true))
			}
		} else if srv.Kind != catalog.KindGitHub {
			for _, ct := range srv.Tools {
				t := StoredTool{RemoteName: ct.Name, Name: ModelName(srv.Slug, ct.Name), Description: ct.Description}
				sv.Tools = append(sv.Tools, s.toolView(chain, res, scope, srv.ID, t, false))
			}
		}
		if l, ok := own[srv.ID]; ok {
			sv.OwnLogin = &l
		}
		v.Servers = append(v.Servers, sv)
	}
	return v, s.withApprovals(ctx, db, pl, &v)
}

// ownLogins returns the logins owned at a place, by server id.
func ownLogins(ctx context.Context, db store.DB, pl Place) (map[string]LoginView, error) {
	rows, err := connstore.List(ctx, db, string(pl.Scope), pl.ID())
	if err != nil {
		return nil, err
	}
	out := map[string]LoginView{}
	for _, c := range rows {
		if c.OwnerID != pl.ID() {
			continue
		}
		out[c.Server.ID.String()] = loginView(c, pl.Scope)
	}
	return out, nil
}

func loginView(c connstore.Connection, decidedBy Scope) LoginView {
	return LoginView{ID: c.ID.String(), OwnerScope: Scope(c.OwnerScope), OwnerID: c.OwnerID, Status: c.Status,
		AccountHint: c.AccountHint, DecidedBy: decidedBy}
}

func (s *Service) toolView(chain []chainRow, res Resolved, scope Scope, serverID string, t StoredTool, listed bool) ServerToolView {
	on, by := res.ToolState(serverID, t.Name)
	v := ServerToolView{Name: t.Name, RemoteName: t.RemoteName, Description: t.Description, Listed: listed,
		Switch: toolSwitchAt(chain, scope, t.Name, res.Servers[serverID].ConnectionID), Enabled: on, DecidedBy: by}
	if listed {
		if _, err := s.cache.shape(t.Schema); err != nil {
			v.Problem = schemaProblem(err)
		}
	}
	return v
}

type loginTools struct {
	view  LoginView
	tools []StoredTool
}

func (s *Service) viewLogins(ctx context.Context, db store.DB, res Resolved) (map[string]loginTools, error) {
	var ids []string
	for _, d := range res.Servers {
		if d.ConnectionID != "" {
			ids = append(ids, d.ConnectionID)
		}
	}
	out := map[string]loginTools{}
	if len(ids) == 0 {
		return out, nil
	}
	logins, tools, err := connstore.ByIDsWithTools(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	for _, c := range logins {
		var listed []StoredTool
		if t := tools[c.ID]; len(t) > 0 {
			listed = storedTools(t)
		}
		out[c.ID.String()] = loginTools{view: loginView(c, ""), tools: listed}
	}
	return out, nil
}

// withApprovals shows, beside each tool, the approval setting that decides
// for it at this place: one query for the whole view.
func (s *Service) withApprovals(ctx context.Context, db store.DB, pl Place, v *ToolsView) error {
	chain, err := approvals.Chain(ctx, db, approvals.Place{OrganisationID: pl.OrgID, GuildID: pl.GuildID, AgentID: pl.AgentID})
	if err != nil || len(chain) == 0 {
		return err
	}
	decided := func(tool string) *approvals.Effective {
		if eff := approvals.In(chain, tool); eff.Decided {
			return &eff
		}
		return nil
	}
	for i := range v.Native {
		v.Native[i].Approval = decided(v.Native[i].Name)
	}
	for i := range v.Servers {
		for j := range v.Servers[i].Tools {
			v.Servers[i].Tools[j].Approval = decided(v.Servers[i].Tools[j].Name)
		}
	}
	return nil
}

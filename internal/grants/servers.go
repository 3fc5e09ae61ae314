package grants

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/validation"
)

// OAuth setup states of a catalog server.
const (
	SetupNotApplicable = "not_applicable" // token or no auth
	SetupDynamic       = "dynamic"        // the server registers a client at Connect
	SetupConfigured    = "configured"     // the box holds the OAuth client or App it needs
	SetupUnsupported   = "unsupported"    // the box lacks it: Connect is refused
)

// CatalogTool is a tool a server publishes in the catalog.
type CatalogTool = catalog.Tool

// Server is a catalog row: a remote MCP server, a local adapter or GitHub.
type Server struct {
	ID          string          `json:"id"`
	Slug        string          `json:"slug"`
	Name        string          `json:"name"`
	Kind        catalog.Kind    `json:"kind"`
	Transport   string          `json:"transport"`
	URL         string          `json:"url"`
	Auth        catalog.Auth    `json:"auth"`
	Config      json.RawMessage `json:"config"`
	Description string          `json:"description"`
	Limitations string          `json:"limitations"`
	SetupHint   string          `json:"setup_hint"`
	CopySource  string          `json:"copy_source"`
	Published   bool            `json:"published"`
	Tools       []CatalogTool   `json:"tools"`
	// OAuthSetupState and MissingVariables are computed from the box's integrations.
	OAuthSetupState  string   `json:"oauth_setup_state"`
	MissingVariables []string `json:"missing_variables"`
	// Available is false for a local adapter this build does not ship: its
	// key connect answers adapter_unavailable and the Tools view shows it
	// as not set up.
	Available bool      `json:"available"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// shipped reports whether this build can serve a catalog row: every remote
// server, and a local adapter whose package is compiled in (config.adapter,
// else the slug).
func shipped(kind catalog.Kind, slug string, config json.RawMessage) bool {
	if kind != catalog.KindAdapter {
		return true
	}
	c, _ := catalog.ParseConfig(config) // lenient: a bad config names no adapter
	_, ok := adapters.Lookup(c.AdapterName(slug))
	return ok
}

// SetupState reports whether the box can connect logins to a server.
func SetupState(integ *integrations.Registry, slug string, auth catalog.Auth, config json.RawMessage) (state string, missing []string) {
	missing = []string{}
	if auth != catalog.AuthOAuth {
		return SetupNotApplicable, missing
	}
	if integ != nil {
		if dep, on, miss := integ.ConnectorEnabled(slug); dep != "" {
			if on {
				return SetupConfigured, missing
			}
			return SetupUnsupported, append(missing, miss...)
		}
	}
	c, _ := catalog.ParseConfig(config) // lenient: what decoded decides
	switch {
	case c.DynamicRegistration || c.OAuth.Registered:
		return SetupDynamic, missing
	case c.OAuth.ClientID != "":
		// The admin put an OAuth client on the catalog row.
		return SetupConfigured, missing
	}
	return SetupUnsupported, missing
}

// Manifests returns the seed catalog embedded in the binary
// (catalog.Manifests) as server inputs, each checked as an admin's row is.
func Manifests() ([]ServerInput, error) {
	ms, err := catalog.Manifests()
	if err != nil {
		return nil, err
	}
	out := make([]ServerInput, len(ms))
	for i, m := range ms {
		out[i] = ServerInput{Slug: &m.Slug, Name: &m.Name, Kind: &m.Kind, Transport: &m.Transport, URL: &m.URL,
			Auth: &m.Auth, Description: &m.Description, Limitations: &m.Limitations, SetupHint: &m.SetupHint,
			Config: m.Config, Tools: &m.Tools}
		if err := checkServer(out[i], true, nil); err != nil {
			return nil, fmt.Errorf("grants: manifest %s: %w", m.Slug, err)
		}
	}
	return out, nil
}

// ServerInput creates or changes a catalog row; nil fields keep their value.
type ServerInput struct {
	Slug        *string         `json:"slug"`
	Name        *string         `json:"name"`
	Kind        *catalog.Kind   `json:"kind"`
	Transport   *string         `json:"transport"`
	URL         *string         `json:"url"`
	Auth        *catalog.Auth   `json:"auth"`
	Config      json.RawMessage `json:"config"`
	Description *string         `json:"description"`
	Limitations *string         `json:"limitations"`
	SetupHint   *string         `json:"setup_hint"`
	Published   *bool           `json:"published"`
	// Tools, when given, replaces the published tool list.
	Tools *[]CatalogTool `json:"tools"`
}

var slugPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

func oneOf(v *string, allowed ...string) bool {
	if v == nil {
		return true
	}
	for _, a := range allowed {
		if *v == a {
			return true
		}
	}
	return false
}

// URLCheck refuses a catalog URL the platform must not call (see
// mcpoauth.Policy.Check); nil accepts any http(s) URL.
type URLCheck func(raw string) error

func checkServer(in ServerInput, create bool, checkURL URLCheck) error {
	var p validation.Problems
	if create {
		p.Check(in.Slug != nil, "slug", "is required")
		p.Check(in.Name != nil, "name", "is required")
		p.Check(in.Transport != nil, "transport", "is required")
		p.Check(in.Auth != nil, "auth", "is required")
	} else {
		p.Check(in.Slug == nil, "slug", "cannot change")
	}
	if in.Slug != nil {
		p.Check(slugPattern.MatchString(*in.Slug), "slug", "must start with a lower-case letter and hold only lower-case letters, digits and _ (at most 40 characters), like acme_crm")
	}
	if in.Name != nil {
		p.Check(strings.TrimSpace(*in.Name) != "" && len(*in.Name) <= 100, "name", "must be 1 to 100 characters")
	}
	p.Check(in.Kind == nil || in.Kind.Valid(), "kind", "must be remote, adapter or github")
	p.Check(oneOf(in.Transport, "http", "sse", "stdio"), "transport", "must be http, sse or stdio")
	p.Check(in.Auth == nil || in.Auth.Valid(), "auth", "must be none, token or oauth")
	if in.URL != nil {
		httpURL := *in.URL == "" || strings.HasPrefix(*in.URL, "https://") || strings.HasPrefix(*in.URL, "http://")
		p.Check(httpURL, "url", "must be an http(s) URL")
		if httpURL && *in.URL != "" && checkURL != nil {
			if err := checkURL(*in.URL); err != nil {
				p.Add("url", "is refused: %v", err)
			}
		}
	}
	if len(in.Config) > 0 {
		var m map[string]any
		isObject := json.Unmarshal(in.Config, &m) == nil && m != nil
		p.Check(isObject, "config", "must be a JSON object")
		if isObject {
			if err := connectors.CheckCatalogConfig(in.Config); err != nil {
				p.Add("config", "%v", err)
			}
			if c, err := catalog.ParseConfig(in.Config); err == nil {
				if !catalog.ValidElicitation(c.Elicitation) {
					p.Add("config.elicitation", "must be %q, %q or %q", catalog.ElicitDecline, catalog.ElicitDefaults, catalog.ElicitPerson)
				}
				if field, problem := c.CheckTimeouts(); field != "" {
					p.Add(field, "%s", problem)
				}
			}
			checkOAuthURLs(&p, in.Config, checkURL)
		}
	}
	for field, v := range map[string]*string{"description": in.Description, "limitations": in.Limitations, "setup_hint": in.SetupHint} {
		if v != nil {
			p.Check(len(*v) <= 4000, field, "must be at most 4000 characters")
		}
	}
	if in.Tools != nil {
		seen := map[string]bool{}
		for i, t := range *in.Tools {
			f := fmt.Sprintf("tools[%d]", i)
			p.Check(t.Name != "" && len(t.Name) <= 128 && !seen[t.Name], f+".name", "must be a unique non-empty name")
			seen[t.Name] = true
			if len(t.InputSchema) > 0 {
				if _, _, err := tools.Shape(t.InputSchema); err != nil {
					p.Add(f+".input_schema", "cannot be offered: %v", err)
				}
			}
		}
	}
	return p.Err()
}

const serverCols = `id, slug, name, kind, transport, url, auth, config, description, limitations, setup_hint,
	copy_source, published, created_at, updated_at`

func scanServer(row interface{ Scan(...any) error }) (Server, error) {
	var s Server
	err := row.Scan(&s.ID, &s.Slug, &s.Name, &s.Kind, &s.Transport, &s.URL, &s.Auth, &s.Config, &s.Description,
		&s.Limitations, &s.SetupHint, &s.CopySource, &s.Published, &s.CreatedAt, &s.UpdatedAt)
	s.Config = redactConfig(s.Config)
	return s, err
}

// ListServers returns the catalog with published tools and setup states; with
// publishedOnly it leaves out what the admin unpublished.
func ListServers(ctx context.Context, db store.DB, integ *integrations.Registry, publishedOnly bool) ([]Server, error) {
	rows, err := db.Query(ctx, `SELECT `+serverCols+` FROM mcp_servers WHERE published OR NOT $1 ORDER BY name`, publishedOnly)
	if err != nil {
		return nil, err
	}
	out := []Server{}
	byID := map[string]int{}
	for rows.Next() {
		s, err := scanServer(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		s.Tools = []CatalogTool{}
		s.OAuthSetupState, s.MissingVariables = SetupState(integ, s.Slug, s.Auth, s.Config)
		s.Available = shipped(s.Kind, s.Slug, s.Config)
		s.Available = shipped(s.Kind, s.Slug, s.Config)
		byID[s.ID] = len(out)
		out = append(out, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	trows, err := db.Query(ctx, `SELECT server_id, name, description, input_schema FROM mcp_catalog_tools ORDER BY server_id, position, name`)
	if err != nil {
		return nil, err
	}
	defer trows.Close()
	for trows.Next() {
		var sid string
		var t CatalogTool
		if err := trows.Scan(&sid, &t.Name, &t.Description, &t.InputSchema); err != nil {
			return nil, err
		}
		if i, ok := byID[sid]; ok {
			out[i].Tools = append(out[i].Tools, t)
		}
	}
	return out, trows.Err()
}

// GetServer returns one catalog row by id or slug.
func GetServer(ctx context.Context, db store.DB, integ *integrations.Registry, idOrSlug string) (Server, error) {
	s, err := scanServer(db.QueryRow(ctx, `SELECT `+serverCols+` FROM mcp_servers WHERE id::text = $1 OR slug = $1`, idOrSlug))
	if err != nil {
		return s, store.Map(err)
	}
	s.OAuthSetupState, s.MissingVariables = SetupState(integ, s.Slug, s.Auth, s.Config)
	s.Available = shipped(s.Kind, s.Slug, s.Config)
	s.Tools = []CatalogTool{}
	rows, err := db.Query(ctx, `SELECT name, description, input_schema FROM mcp_catalog_tools WHERE server_id = $1 ORDER BY position, name`, s.ID)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var t CatalogTool
		if err := rows.Scan(&t.Name, &t.Description, &t.InputSchema); err != nil {
			return s, err
		}
		s.Tools = append(s.Tools, t)
	}
	return s, rows.Err()
}

func kindOr(v *catalog.Kind, def catalog.Kind) catalog.Kind {
	if v == nil {
		return def
	}
	return *v
}

func strOr(v *string, def string) string {
	if v == nil {
		return def
	}
	return *v
}

// CreateServer adds a catalog row edited by the admin; checkURL vets its
// URLs and seal its OAuth client secrets (nil: stored as given, for tests).
func CreateServer(ctx context.Context, db store.DB, integ *integrations.Registry, in ServerInput, checkURL URLCheck, seal SecretSealer) (Server, error) {
	if err := checkServer(in, true, checkURL); err != nil {
		return Server{}, err
	}
	cfg, err := sealConfig(seal, *in.Slug, keepSecret(nil, in.Config))
	if err != nil {
		return Server{}, err
	}
	if len(cfg) == 0 {
		cfg = json.RawMessage(`{}`)
	}
	pub := in.Published == nil || *in.Published
	var id string
	err = db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config, description,
		limitations, setup_hint, copy_source, published) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,'admin',$11) RETURNING id`,
		*in.Slug, strings.TrimSpace(*in.Name), kindOr(in.Kind, catalog.KindRemote), *in.Transport, strOr(in.URL, ""), *in.Auth, cfg,
		strOr(in.Description, ""), strOr(in.Limitations, ""), strOr(in.SetupHint, ""), pub).Scan(&id)
	if err != nil {
		return Server{}, store.Map(err)
	}
	if in.Tools != nil {
		if err := catalog.ReplaceTools(ctx, db, id, *in.Tools); err != nil {
			return Server{}, err
		}
	}
	return GetServer(ctx, db, integ, id)
}

// UpdateServer changes a catalog row; the row becomes admin copy, which reseeds leave alone.
func UpdateServer(ctx context.Context, db store.DB, integ *integrations.Registry, id string, in ServerInput, checkURL URLCheck, seal SecretSealer) (Server, error) {
	cur, err := GetServer(ctx, db, integ, id)
	if err != nil {
		return Server{}, err
	}
	if err := checkServer(in, false, checkURL); err != nil {
		return Server{}, err
	}
	var cfg any
	var stored json.RawMessage
	if err := db.QueryRow(ctx, `SELECT config FROM mcp_servers WHERE id = $1`, cur.ID).Scan(&stored); err != nil {
		return Server{}, store.Map(err)
	}
	var next json.RawMessage
	if len(in.Config) > 0 {
		next = keepSecret(stored, in.Config)
		sealed, err := sealConfig(seal, cur.Slug, next)
		if err != nil {
			return Server{}, err
		}
		cfg = sealed
	}
	if err := checkTokenDestinations(ctx, db, cur, stored, in.URL, next); err != nil {
		return Server{}, err
	}
	_, err = db.Exec(ctx, `UPDATE mcp_servers SET name = coalesce($2, name), kind = coalesce($3, kind),
		transport = coalesce($4, transport), url = coalesce($5, url), auth = coalesce($6, auth),
		config = coalesce($7, config), description = coalesce($8, description), limitations = coalesce($9, limitations),
		setup_hint = coalesce($10, setup_hint), published = coalesce($11, published), copy_source = 'admin', updated_at = now()
		WHERE id = $1`, cur.ID, in.Name, in.Kind, in.Transport, in.URL, in.Auth, cfg, in.Description, in.Limitations,
		in.SetupHint, in.Published)
	if err != nil {
		return Server{}, store.Map(err)
	}
	// After the update: a pool that hears it reads the changed row.
	if err := connstore.AnnounceServer(ctx, db, cur.ID); err != nil {
		return Server{}, err
	}
	if in.Tools != nil {
		if err := catalog.ReplaceTools(ctx, db, cur.ID, *in.Tools); err != nil {
			return Server{}, err
		}
	}
	return GetServer(ctx, db, integ, cur.ID)
}

// DeleteServer removes a catalog row with its connections and bindings.
func DeleteServer(ctx context.Context, db store.DB, id string) error {
	tag, err := db.Exec(ctx, `DELETE FROM mcp_servers WHERE id::text = $1 OR slug = $1`, id)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// SeedCatalog writes the embedded manifests into the catalog, once every
// entry passed the admin's checks (catalog.Seed).
func SeedCatalog(ctx context.Context, db store.DB) error {
	if _, err := Manifests(); err != nil {
		return err
	}
	ms, err := catalog.Manifests()
	if err != nil {
		return err
	}
	return catalog.Seed(ctx, db, ms)
}

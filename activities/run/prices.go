package run

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/pinnedprices"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
)

// CredentialSource resolves a login's stored credential now
// (connectors.Resolver).
type CredentialSource interface {
	Token(ctx context.Context, id uuid.UUID) (connectors.Credential, error)
}

// quoteTimeout bounds the price quote of a run start, well inside the
// snapshot activity's own timeout.
const quoteTimeout = 15 * time.Second

// pinnedLogin is a connected Pinned prices login an agent's chain resolves to.
type pinnedLogin struct{ connectionID, url string }

// statePrices quotes the coins of the Pinned prices logins the agent uses
// (the server switched on for it, with a connected login) and returns the
// prompt section, or "" when it uses none. A failed quote is logged and
// shown as unavailable: prices never stop a run.
func (a *Activities) statePrices(ctx context.Context, agent orgs.Agent) string {
	logins, err := pinnedLogins(ctx, a.d.DB, agent)
	if err != nil {
		a.d.Log.WarnContext(ctx, "state prices: cannot resolve the pinned prices login", "agent_id", agent.ID, "err", err)
		return ""
	}
	var coins []pinnedprices.Coin
	prices := map[string]pinnedprices.Price{}
	seen := map[string]bool{}
	for _, l := range logins {
		list, err := pinnedprices.Coins(ctx, a.d.DB, l.connectionID)
		if err != nil {
			a.d.Log.WarnContext(ctx, "state prices: cannot load the coins", "connection", l.connectionID, "err", err)
			return pinnedprices.UnavailableSection()
		}
		if len(list) == 0 {
			continue
		}
		quoted, err := a.quote(ctx, l, list)
		if err != nil {
			a.d.Log.WarnContext(ctx, "state prices: quote failed", "connection", l.connectionID, "err", err)
			return pinnedprices.UnavailableSection()
		}
		for _, c := range list {
			if !seen[c.ID] {
				seen[c.ID] = true
				coins = append(coins, c)
			}
		}
		for id, p := range quoted {
			prices[id] = p
		}
	}
	if len(coins) == 0 {
		return ""
	}
	return pinnedprices.Section(coins, prices)
}

// quote asks CoinGecko with the login's key; the key is cut out of any
// error, which may echo the request.
func (a *Activities) quote(ctx context.Context, l pinnedLogin, coins []pinnedprices.Coin) (map[string]pinnedprices.Price, error) {
	if a.d.Credentials == nil {
		return nil, errNoCredentials
	}
	cred, err := a.d.Credentials.Token(ctx, uuid.MustParse(l.connectionID))
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(coins))
	for i, c := range coins {
		ids[i] = c.ID
	}
	qctx, cancel := context.WithTimeout(ctx, quoteTimeout)
	defer cancel()
	out, err := pinnedprices.Quote(qctx, adapters.Conn{HTTP: a.d.HTTP, BaseURL: l.url, Cred: cred}, ids)
	if err != nil && cred.AccessToken != "" && strings.Contains(err.Error(), cred.AccessToken) {
		return nil, redactedError(strings.ReplaceAll(err.Error(), cred.AccessToken, "[REDACTED]"))
	}
	return out, err
}

type redactedError string

func (e redactedError) Error() string { return string(e) }

const errNoCredentials = redactedError("this worker cannot resolve credentials")

// pinnedLogins resolves the agent's chain of bindings for the Pinned prices
// servers as a run offer does (grants.Resolve) and keeps each one that is
// switched on with a connected login. The server lists no tools, so the
// offer itself never names it.
func pinnedLogins(ctx context.Context, db store.DB, agent orgs.Agent) ([]pinnedLogin, error) {
	servers, err := catalog.ServedBy(ctx, db, pinnedprices.Name)
	if err != nil || len(servers) == 0 {
		return nil, err
	}
	serverIDs := make([]string, len(servers))
	for i, s := range servers {
		serverIDs[i] = s.ID
	}
	rows, err := db.Query(ctx, `SELECT b.scope, b.catalog_id, b.server_id::text, b.enabled, coalesce(b.connection_id::text, '')
		FROM bindings b
		WHERE b.catalog_kind = $1 AND b.server_id::text = ANY($2)
		  AND (b.scope = 'platform' OR b.scope_id = ANY($3::uuid[]))`,
		grants.KindMCP, serverIDs, []string{agent.OrganisationID, agent.GuildID, agent.ID})
	if err != nil {
		return nil, store.Map(err)
	}
	var chain []grants.Row
	for rows.Next() {
		r := grants.Row{Kind: grants.KindMCP}
		if err := rows.Scan(&r.Scope, &r.CatalogID, &r.ServerID, &r.Enabled, &r.ConnectionID); err != nil {
			rows.Close()
			return nil, err
		}
		chain = append(chain, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var conns []string
	for _, d := range grants.Resolve(chain).Servers {
		if d.Enabled && d.ConnectionID != "" {
			conns = append(conns, d.ConnectionID)
		}
	}
	if len(conns) == 0 {
		return nil, nil
	}
	found, err := connstore.ByIDs(ctx, db, conns)
	if err != nil {
		return nil, err
	}
	var out []pinnedLogin
	for _, c := range found {
		if c.Status == connstore.StatusConnected {
			out = append(out, pinnedLogin{connectionID: c.ID.String(), url: c.Server.URL})
		}
	}
	return out, nil
}

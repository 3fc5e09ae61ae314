package connectors

import (
	"context"
	"errors"

	"github.com/google/uuid"
)

// IssuerMoved marks reconnect_required, with CodeIssuerChanged, every
// stored login of a catalog server that was issued by another authorization
// server than the one its row names now, and tells every replica at once.
// Connect calls it when discovery found the server moved (its RFC 9728
// metadata names a new issuer), so the operator sees which logins need a new
// authorisation before any of them is used. The resolver refuses such a
// login by itself too (Resolver.Token, Refresh): this only makes the verdict
// visible early. A login that recorded no issuer (stored before logins kept
// their client) is marked too: it was issued under the row's former
// issuer, and the resolver alone could not tell. It returns how many logins
// it marked.
func (e *Engine) IssuerMoved(ctx context.Context, serverID uuid.UUID) (int, error) {
	if err := e.active(); err != nil {
		return 0, err
	}
	recs, err := listRecords(ctx, e.db)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rec := range recs {
		if rec.conn.ServerID != serverID || rec.conn.Auth != AuthOAuth || !rec.has || rec.conn.Health.State == HealthReconnectRequired {
			continue
		}
		cred, err := unseal(e.keys, rec.conn.ID, rec.ct)
		if err != nil || cred.AccessToken == "" && cred.RefreshToken == "" { // a wiped login holds nothing to refuse
			continue
		}
		unknown := cred.Client == nil || cred.Client.Issuer == ""
		if !unknown && !e.bindingFor(rec).issuerMoved(cred) {
			continue
		}
		_, v, err := recordFailure(ctx, e.db, rec.conn.ID, rec.version, true, CodeIssuerChanged)
		if errors.Is(err, errFenced) {
			continue // written meanwhile; the resolver's own check still applies
		}
		if err != nil {
			return n, err
		}
		e.changed(ctx, rec.conn.ID, v)
		e.log.Warn("connectors: the server moved to another authorization server; the login needs reconnecting",
			"connection", rec.conn.ID, "server", rec.conn.ServerSlug, "code", CodeIssuerChanged)
		n++
	}
	return n, nil
}

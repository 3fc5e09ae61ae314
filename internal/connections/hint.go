package connections

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
)

// storedHint is the login's display hint. The token response's email_domain
// (Notion) comes first: the engine stored it on the connection during the
// exchange. Only a login without a hint asks the server's userinfo endpoint,
// when its metadata names one and a Discoverer is given.
func storedHint(ctx context.Context, d Deps, c connstore.Connection) string {
	id := c.ID.UUID()
	current := c.AccountHint
	row, _ := catalog.ParseConfig(c.Server.Config) // lenient: no userinfo URL, no hint
	if current != "" || row.OAuth.UserinfoURL == "" || d.Discoverer == nil {
		return current
	}
	if _, err := d.Discoverer.Policy.Check(row.OAuth.UserinfoURL); err != nil {
		return current
	}
	cred, err := d.Engine.Resolver().Token(ctx, id)
	if err != nil {
		return current
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, http.MethodGet, row.OAuth.UserinfoURL, nil)
	for k, v := range connectors.DefaultInjection(cred).Headers {
		req.Header.Set(k, v)
	}
	resp, err := d.Discoverer.Policy.Client(10 * time.Second).Do(req)
	if err != nil {
		return current
	}
	defer resp.Body.Close()
	var info struct {
		EmailDomain string `json:"email_domain"`
	}
	if resp.StatusCode == http.StatusOK {
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&info)
	}
	if info.EmailDomain != "" && len(info.EmailDomain) <= 253 {
		return info.EmailDomain
	}
	return current
}

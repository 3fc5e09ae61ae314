package mcppool

import (
	"net/http"
	"strings"
	"sync"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/dpop"
)

// dpopTransport wraps base for an OAuth session: a request the header
// function authorised with "Authorization: DPoP <token>" (a DPoP-bound
// login, connectors.Credential.DPoPBound) gets a fresh proof of the login's
// key, with the request's method and URL and the token's hash, and a
// use_dpop_nonce challenge of the server is answered once with its nonce
// (dpop.Transport). Other requests pass through untouched, so Bearer logins
// are sent exactly as before. A redirect to another host gets no proof.
func (p *Pool) dpopTransport(s *session, base http.RoundTripper) http.RoundTripper {
	var cache keyCache
	return &dpop.Transport{Base: base, Key: func(req *http.Request) *dpop.Key {
		scheme, _, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "DPoP") || connectors.LeftOriginalHost(req) {
			return nil
		}
		cred, err := p.o.Credentials.Token(req.Context(), s.id)
		if err != nil || !cred.DPoPBound() {
			return nil
		}
		return cache.get(cred.DPoPKey)
	}}
}

// keyCache keeps the parsed key of the login's sealed JWK, so a request
// does not parse it again while the login keeps its key.
type keyCache struct {
	mu  sync.Mutex
	jwk string
	key *dpop.Key
}

func (c *keyCache) get(jwk string) *dpop.Key {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key != nil && c.jwk == jwk {
		return c.key
	}
	k, err := dpop.ParsePrivate([]byte(jwk))
	if err != nil {
		return nil // sent without a proof: the server refuses it, and the 401 path takes over
	}
	c.jwk, c.key = jwk, k
	return k
}

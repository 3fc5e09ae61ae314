package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// The platform serves its client ID metadata document without
// authentication: client_id is the document's own URL under
// PUBLIC_BASE_URL, the redirect URI is the OAuth callback there, and the
// client is public (PKCE, no secret). A plain-http public base gets none.
func TestClientMetadataDocument(t *testing.T) {
	t.Parallel()
	if api.CallbackPath != mcpoauth.CallbackPath {
		t.Fatalf("api.CallbackPath %q and mcpoauth.CallbackPath %q disagree", api.CallbackPath, mcpoauth.CallbackPath)
	}
	e := apitest.New(t, apitest.Options{})
	for public, want := range map[string]string{
		"https://guilds.example":       "https://guilds.example",
		"https://guilds.example/team/": "https://guilds.example/team",
		"":                             e.HTTP.URL, // development: the loopback Host
	} {
		e.Server.PublicBaseURL = public
		r := e.Do("", "GET", mcpoauth.ClientMetadataPath, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%q: HTTP %d %s", public, r.Status, r.Body)
		}
		var doc mcpoauth.ClientDocument
		r.JSON(&doc)
		if doc.ClientID != want+mcpoauth.ClientMetadataPath || len(doc.RedirectURIs) != 1 || doc.RedirectURIs[0] != want+api.CallbackPath ||
			doc.TokenEndpointAuthMethod != "none" || doc.ClientName != api.ClientName ||
			strings.Join(doc.GrantTypes, " ") != "authorization_code refresh_token" || strings.Join(doc.ResponseTypes, " ") != "code" {
			t.Fatalf("%q: %+v", public, doc)
		}
		if wantType := map[bool]string{true: "web", false: "native"}[strings.HasPrefix(public, "https://")]; doc.ApplicationType != wantType {
			t.Errorf("%q: application_type %q", public, doc.ApplicationType)
		}
	}
	e.Server.PublicBaseURL = "http://guilds.internal"
	if r := e.Do("", "GET", mcpoauth.ClientMetadataPath, nil); r.Status != http.StatusNotFound {
		t.Fatalf("plain-http public base: HTTP %d", r.Status)
	}
}

// An authorization server that accepts documents takes the platform's as
// served: it fetches the client_id URL, finds its own URL and the
// callback there, and approves an authorization request naming them.
func TestClientMetadataDocumentAcceptedByAServer(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	as := oauthtest.New(t)
	as.ClientIDMetadataDocuments = true
	redirect := e.HTTP.URL + api.CallbackPath
	clientID := mcpoauth.ClientMetadataURL(redirect)
	q := url.Values{"client_id": {clientID}, "redirect_uri": {redirect}, "response_type": {"code"},
		"code_challenge_method": {"S256"}, "code_challenge": {mcpoauth.S256("verifier")}, "state": {"st"}}
	resp, err := http.DefaultTransport.RoundTrip(mustRequest(t, as.URL+"/authorize?"+q.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || as.Count("document") != 1 || !strings.HasPrefix(loc.String(), redirect) || loc.Query().Get("code") == "" {
		t.Fatalf("HTTP %d, Location %q, documents fetched %d", resp.StatusCode, loc, as.Count("document"))
	}
}

func mustRequest(t *testing.T, raw string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

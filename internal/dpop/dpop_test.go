package dpop_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/guilds/guilds/internal/dpop"
)

func TestProofVerifiesWithItsClaims(t *testing.T) {
	k, err := dpop.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	p, err := dpop.Proof(k, "post", "https://as.example/token?x=1#f", "tok-123", "n-1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := dpop.Verify(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.HTM != "POST" || c.HTU != "https://as.example/token" || c.Nonce != "n-1" || c.JTI == "" || c.IAT == 0 {
		t.Fatalf("claims %+v", c)
	}
	if c.ATH != dpop.AccessTokenHash("tok-123") || c.JKT != k.Thumbprint() {
		t.Fatalf("ath %q jkt %q", c.ATH, c.JKT)
	}
	// The header holds the public key only.
	hdr, _ := json.Marshal(k.PublicJWK())
	if strings.Contains(string(hdr), `"d"`) {
		t.Fatal("public JWK has d")
	}
	// No ath or nonce when none is given; a fresh jti each time.
	p2, _ := dpop.Proof(k, "GET", "https://rs.example/mcp", "", "")
	c2, err := dpop.Verify(p2)
	if err != nil {
		t.Fatal(err)
	}
	if c2.ATH != "" || c2.Nonce != "" || c2.JTI == c.JTI {
		t.Fatalf("claims %+v", c2)
	}
	// A tampered proof fails.
	parts := strings.Split(p, ".")
	other, _ := dpop.Proof(k, "GET", "https://evil.example/", "", "")
	if _, err := dpop.Verify(parts[0] + "." + strings.Split(other, ".")[1] + "." + parts[2]); err == nil {
		t.Fatal("tampered proof verified")
	}
}

func TestKnownThumbprint(t *testing.T) {
	// RFC 7638's method on a fixed P-256 key, computed independently:
	// the thumbprint is SHA-256 of the canonical JSON of crv, kty, x, y.
	k, err := dpop.ParsePrivate([]byte(`{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Thumbprint(); got != "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U" {
		t.Fatalf("thumbprint %s", got)
	}
}

func TestPrivateRoundTripAndRedaction(t *testing.T) {
	k, _ := dpop.GenerateKey()
	b, err := k.MarshalPrivate()
	if err != nil {
		t.Fatal(err)
	}
	k2, err := dpop.ParsePrivate(b)
	if err != nil {
		t.Fatal(err)
	}
	if k2.Thumbprint() != k.Thumbprint() {
		t.Fatal("round trip changed the key")
	}
	p, _ := dpop.Proof(k2, "POST", "https://as.example/token", "", "")
	if c, err := dpop.Verify(p); err != nil || c.JKT != k.Thumbprint() {
		t.Fatalf("proof of parsed key: %v", err)
	}
	var j map[string]string
	_ = json.Unmarshal(b, &j)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%+v %#v %s", k, k, k)} {
		if strings.Contains(s, j["d"]) {
			t.Fatalf("key printed: %s", s)
		}
	}
	if _, err := dpop.ParsePrivate([]byte(`{"kty":"EC","crv":"P-256","x":"AA","y":"AA","d":"AA"}`)); err == nil {
		t.Fatal("malformed key parsed")
	}
}

// server requires proofs and a nonce, as an authorization server (400) or
// a resource server (401) asks for one.
type server struct {
	resource bool
	mu       sync.Mutex
	jtis     map[string]bool
	proofs   []dpop.Claims
	bodies   []string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := dpop.Verify(r.Header.Get("DPoP"))
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || c.HTU != "http://"+r.Host+r.URL.Path || c.HTM != r.Method || s.jtis[c.JTI] {
		http.Error(w, "bad proof", http.StatusBadRequest)
		return
	}
	s.jtis[c.JTI] = true
	s.proofs = append(s.proofs, c)
	s.bodies = append(s.bodies, string(body))
	if c.Nonce != "nonce-1" {
		w.Header().Set("DPoP-Nonce", "nonce-1")
		if s.resource {
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce", error_description="nonce"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"use_dpop_nonce"}`)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

func TestTransportRetriesWithTheNonce(t *testing.T) {
	for _, resource := range []bool{false, true} {
		t.Run(fmt.Sprint("resource=", resource), func(t *testing.T) {
			s := &server{resource: resource, jtis: map[string]bool{}}
			ts := httptest.NewServer(s)
			defer ts.Close()
			k, _ := dpop.GenerateKey()
			c := &http.Client{Transport: dpop.NewTransport(nil, k)}
			for i := range 2 {
				req, _ := http.NewRequest(http.MethodPost, ts.URL+"/p?q=1", strings.NewReader(fmt.Sprint("body", i)))
				req.Header.Set("Authorization", "DPoP tok")
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(b) != "ok" {
					t.Fatalf("request %d: %d %s", i, resp.StatusCode, b)
				}
			}
			// First request: one challenge, one retry with the same body;
			// second: the remembered nonce at once.
			if len(s.proofs) != 3 || s.bodies[0] != "body0" || s.bodies[1] != "body0" || s.bodies[2] != "body1" {
				t.Fatalf("proofs %d bodies %q", len(s.proofs), s.bodies)
			}
			if s.proofs[1].Nonce != "nonce-1" || s.proofs[2].Nonce != "nonce-1" || s.proofs[0].ATH != dpop.AccessTokenHash("tok") {
				t.Fatalf("proofs %+v", s.proofs)
			}
		})
	}
}

func TestTransportWithoutKeyPassesThrough(t *testing.T) {
	var got string
	ts := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Get("DPoP") }))
	defer ts.Close()
	c := &http.Client{Transport: &dpop.Transport{Key: func(*http.Request) *dpop.Key { return nil }}}
	resp, err := c.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "" {
		t.Fatal("proof sent without a key")
	}
}

func BenchmarkProof(b *testing.B) {
	k, _ := dpop.GenerateKey()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dpop.Proof(k, "POST", "https://rs.example/mcp", "tok", "n"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestTransportLeavesOtherErrorsAndSpentBodiesToTheCaller(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	calls := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("DPoP-Nonce", "n")
		if r.URL.Path == "/other" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant","pad":"`+big+`"}`)
			return
		}
		w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer ts.Close()
	k, _ := dpop.GenerateKey()
	c := &http.Client{Transport: dpop.NewTransport(nil, k)}
	resp, err := c.Post(ts.URL+"/other", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), big) || calls != 1 {
		t.Fatalf("status %d, body %d bytes, calls %d", resp.StatusCode, len(b), calls)
	}
	// A body that cannot be replayed: the challenge goes back to the caller.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/rs", io.NopCloser(strings.NewReader("{}")))
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || calls != 2 {
		t.Fatalf("status %d calls %d", resp.StatusCode, calls)
	}
}

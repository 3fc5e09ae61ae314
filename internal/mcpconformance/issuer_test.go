package mcpconformance

import (
	"net/url"
	"testing"
)

// RFC 9207 at the driver's callback: a present iss must equal the prepared
// issuer as a plain string; one the server advertised must be present.
func TestCheckIssuer(t *testing.T) {
	const redirect = "http://127.0.0.1:1/callback"
	expectIssuer(redirect, "http://127.0.0.1:9000/tenant", false)
	for iss, ok := range map[string]bool{"": true, "http://127.0.0.1:9000/tenant": true, "http://127.0.0.1:9000/tenant/": false,
		"HTTP://127.0.0.1:9000/tenant": false, "http://127.0.0.1:9000": false, "http://127.0.0.1:9000/%74enant": false} {
		q := url.Values{"code": {"c"}}
		if iss != "" {
			q.Set("iss", iss)
		}
		if err := checkIssuer(redirect, q); (err == nil) != ok {
			t.Errorf("iss %q: %v, want ok=%v", iss, err, ok)
		}
	}
	expectIssuer(redirect, "http://127.0.0.1:9000/tenant", true)
	if err := checkIssuer(redirect, url.Values{"code": {"c"}}); err == nil {
		t.Error("a missing iss the server advertised was accepted")
	}
	if err := checkIssuer("http://127.0.0.1:2/callback", url.Values{"iss": {"x"}}); err != nil {
		t.Errorf("a login not prepared here: %v", err)
	}
}

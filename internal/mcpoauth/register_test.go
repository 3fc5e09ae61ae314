package mcpoauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/guilds/guilds/internal/mcpoauth"
)

// Dynamic registration names the client's application_type: web for the
// platform's https callback, native for a loopback or plain-http one.
func TestRegisterSendsApplicationType(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = nil
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"client_id":"c1"}`))
	}))
	defer srv.Close()
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	md := mcpoauth.ServerMetadata{RegistrationEndpoint: srv.URL + "/register"}
	for redirect, want := range map[string]string{
		"https://guilds.example/api/mcp/oauth/callback": "web",
		"http://127.0.0.1:8080/api/mcp/oauth/callback":  "native",
		"https://localhost:8443/cb":                     "native",
		"https://[::1]/cb":                              "native",
	} {
		if _, err := d.Register(context.Background(), md, "guilds", redirect, ""); err != nil {
			t.Fatal(err)
		}
		if got["application_type"] != want {
			t.Errorf("%s: application_type %v, want %s", redirect, got["application_type"], want)
		}
	}
}

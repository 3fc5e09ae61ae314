package grants

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRedactConfigHidesTheClientSecret(t *testing.T) {
	t.Parallel()
	in := json.RawMessage(`{"provider":"oauth2","oauth":{"client_id":"cid","client_secret":"s3cr3t-value","registered":true}}`)
	out := redactConfig(in)
	if strings.Contains(string(out), "s3cr3t-value") || !strings.Contains(string(out), `"client_secret_set":true`) ||
		!strings.Contains(string(out), `"client_id":"cid"`) {
		t.Fatalf("redacted %s", out)
	}
	for _, c := range []string{`{}`, `{"adapter":"x"}`, `{"oauth":{"client_id":"c"}}`, `not json`, `{"oauth":"x"}`} {
		if got := redactConfig(json.RawMessage(c)); string(got) != c {
			t.Errorf("%s changed to %s", c, got)
		}
	}
}

func TestKeepSecretCarriesTheStoredSecretOver(t *testing.T) {
	t.Parallel()
	stored := json.RawMessage(`{"oauth":{"client_id":"cid","client_secret":"s3cr3t"}}`)
	secret := func(cfg json.RawMessage) (string, bool) {
		_, o, ok := splitOAuth(cfg)
		if !ok {
			return "", false
		}
		if _, set := o[secretSetKey]; set {
			t.Fatalf("display key stored: %s", cfg)
		}
		v, has := o["client_secret"]
		var s string
		_ = json.Unmarshal(v, &s)
		return s, has
	}
	// The config as read back (redacted), sent again: the secret stays.
	if s, _ := secret(keepSecret(stored, redactConfig(stored))); s != "s3cr3t" {
		t.Fatalf("round trip lost the secret: %q", s)
	}
	// A new client id does not inherit the old client's secret.
	if _, has := secret(keepSecret(stored, json.RawMessage(`{"oauth":{"client_id":"other"}}`))); has {
		t.Fatal("secret carried to another client")
	}
	// An explicit value replaces it; an empty one removes it.
	if s, _ := secret(keepSecret(stored, json.RawMessage(`{"oauth":{"client_id":"cid","client_secret":"new"}}`))); s != "new" {
		t.Fatalf("replace: %q", s)
	}
	if s, has := secret(keepSecret(stored, json.RawMessage(`{"oauth":{"client_id":"cid","client_secret":""}}`))); !has || s != "" {
		t.Fatalf("clear: %q %v", s, has)
	}
	if got := keepSecret(stored, json.RawMessage(`{"adapter":"x"}`)); string(got) != `{"adapter":"x"}` {
		t.Fatalf("no oauth object: %s", got)
	}
}

func TestSetupStateOfOAuthRowsWithoutAnIntegration(t *testing.T) {
	t.Parallel()
	for cfg, want := range map[string]string{
		`{}`:                            SetupUnsupported,
		`{"dynamic_registration":true}`: SetupDynamic,
		`{"oauth":{"client_id":"c","registered":true}}`:                 SetupDynamic,
		`{"oauth":{"client_id":"c","client_secret_env":"ACME_SECRET"}}`: SetupConfigured,
	} {
		if got, _ := SetupState(nil, "acme", "oauth", json.RawMessage(cfg)); got != want {
			t.Errorf("%s: %s, want %s", cfg, got, want)
		}
	}
	if got, _ := SetupState(nil, "acme", "token", nil); got != SetupNotApplicable {
		t.Errorf("token: %s", got)
	}
}

package connectors_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/tools"
)

// A key too short to redact from tool results, or a two-part key with a part
// that short, is refused on the token field with nothing stored and without
// the value in the message; a key long enough is stored.
func TestConnectKeyRefusesValuesTooShortToRedact(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if _, err := e.pool.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth) VALUES ('plain', 'Plain', 'http', 'https://mcp.example/mcp', 'token')`); err != nil {
		t.Fatal(err)
	}
	eng := e.engine(t, engineOpts{})
	id := e.addConnection(t, "plain")
	for _, key := range []string{"k3y-5", "acme:0123456789abcdef", "acme-company-1:s3cr"} {
		_, err := eng.ConnectKey(ctx, id, map[string]string{"token": key})
		msg := problems(t, err)["token"]
		if !strings.Contains(msg, "at least 8 characters") || strings.Contains(err.Error(), key) {
			t.Fatalf("%q: %v", key, err)
		}
		if n := e.count(t, "connection_credentials"); n != 0 {
			t.Fatalf("%q: %d credentials stored", key, n)
		}
	}
	if _, err := eng.ConnectKey(ctx, id, map[string]string{"token": "acme-company-1:0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	if n := e.count(t, "connection_credentials"); n != 1 {
		t.Fatalf("%d credentials stored", n)
	}
}

func TestCheckKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"1234567": false, "12345678": true, "abcd:0123456789": false, "abcdefgh:0123": false,
		"abcdefgh:01234567": true, "abcdefgh:": true, // an empty part joins no redaction set
	} {
		if err := connectors.CheckKey(key); (err == nil) != ok {
			t.Errorf("CheckKey(%q) = %v", key, err)
		}
	}
	if tools.MinSecretLen != 8 {
		t.Fatal("the cases above assume a minimum of 8")
	}
}

// A configured login's secret field too short to redact is refused, by
// CheckConfig (before the server is asked) and by ConnectKey, naming the
// field; a non-secret field stays out of redaction and may be short.
func TestConfigConnectRefusesSecretValuesTooShortToRedact(t *testing.T) {
	ctx := context.Background()
	e, eng, id := configEnv(t, acmeConfig, nil)
	values := map[string]string{"workspace": "ws-1", "api_base": baseValue}
	if _, err := eng.CheckConfig(ctx, id, values); !strings.Contains(problems(t, err)["workspace"], "at least 8 characters") {
		t.Fatalf("CheckConfig: %v", err)
	}
	_, err := eng.ConnectKey(ctx, id, values)
	if got := problems(t, err); len(got) != 1 || !strings.Contains(got["workspace"], "at least 8 characters") || strings.Contains(err.Error(), "ws-1") {
		t.Fatalf("ConnectKey: %v", err)
	}
	if n := e.count(t, "connection_credentials"); n != 0 {
		t.Fatalf("%d credentials stored", n)
	}
	if _, err := eng.ConnectKey(ctx, id, map[string]string{"workspace": wsValue, "api_base": "b"}); err != nil {
		t.Fatalf("a short non-secret value: %v", err)
	}
}

package main

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// TestChildrenStartedAfterStartupSeeNoCredentials: once the platform is up
// (as serve and worker open it), a process started with the default
// environment inherits neither the encryption key, the database and Redis
// addresses nor the model and integration keys; the platform still has them.
func TestChildrenStartedAfterStartupSeeNoCredentials(t *testing.T) {
	key, _ := secret.GenerateKey("k1")
	secrets := map[string]string{
		"GUILDS_ENCRYPTION_KEY":     key,
		"OPENROUTER_API_KEY":        "sk-or-child-must-not-see",
		"GMAIL_OAUTH_CLIENT_SECRET": "gmail-secret-child-must-not-see",
		"NOTION_CLIENT_SECRET":      "notion-secret-child-must-not-see",
		"DATABASE_URL":              testdb.URL(t),
		"REDIS_URL":                 "redis://127.0.0.1:6379/5",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("GUILDS_CHILD_TEST_MARKER", "still-here")
	cfg, ok := loadConfig(io.Discard)
	if !ok {
		t.Fatal("config")
	}
	p, err := openPlatform(context.Background(), cfg, newLogger(io.Discard), false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	out, err := exec.Command("env").Output()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range secrets {
		if strings.Contains(string(out), v) {
			t.Errorf("a child started after start-up sees %s", name)
		}
	}
	if !strings.Contains(string(out), "GUILDS_CHILD_TEST_MARKER=still-here") {
		t.Error("the child lost the environment that carries no credential")
	}
	// The platform read them before they left: the box's model key is on,
	// and a connector reading its client secret lazily still finds it.
	if st, _ := p.integrations.Get("openrouter"); st.State != "on" {
		t.Errorf("openrouter integration: %+v", st)
	}
	if p.env.Getenv("NOTION_CLIENT_SECRET") != secrets["NOTION_CLIENT_SECRET"] {
		t.Error("the start-up snapshot lost a connector's client secret")
	}
}

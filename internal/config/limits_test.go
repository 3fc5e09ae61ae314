package config

import (
	"strings"
	"testing"
)

// Every cap has a default, takes a whole number, and a bad value is refused
// at start with the variable's name.
func TestLimits(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{MaxAgentsPerOrg: 200, MaxSandboxesPerOrg: 20, MaxSandboxes: 50, MaxProxyConnsPerAgent: 64, MaxHomeGB: 10}
	if c.Limits != want {
		t.Fatalf("defaults %+v, want %+v", c.Limits, want)
	}
	c, err = Load(env(map[string]string{"GUILDS_MAX_AGENTS_PER_ORG": "5", "GUILDS_MAX_SANDBOXES_PER_ORG": "2",
		"GUILDS_MAX_SANDBOXES": "4", "GUILDS_MAX_PROXY_CONNS_PER_AGENT": "8", "GUILDS_MAX_HOME_GB": "1"}))
	if err != nil || c.Limits != (Limits{5, 2, 4, 8, 1}) {
		t.Fatalf("settings %+v, %v", c.Limits, err)
	}
	for _, name := range []string{"GUILDS_MAX_AGENTS_PER_ORG", "GUILDS_MAX_SANDBOXES_PER_ORG", "GUILDS_MAX_SANDBOXES",
		"GUILDS_MAX_PROXY_CONNS_PER_AGENT", "GUILDS_MAX_HOME_GB"} {
		for _, bad := range []string{"0", "-1", "lots"} {
			if _, err := Load(env(map[string]string{name: bad})); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: %v", name, bad, err)
			}
		}
	}
}

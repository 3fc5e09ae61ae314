package config

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestSandboxDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Sandbox{Driver: SandboxDocker, Image: DefaultSandboxImage, Idle: DefaultSandboxIdle, Scope: DefaultSandboxScope}
	if c.Sandbox != want {
		t.Fatalf("sandbox = %+v, want %+v", c.Sandbox, want)
	}
}

func TestSandboxSettings(t *testing.T) {
	c, err := Load(env(map[string]string{
		"GUILDS_SANDBOX_DRIVER": "local", "GUILDS_SANDBOX_ALLOW_LOCAL": "1",
		"GUILDS_SANDBOX_IMAGE": "registry.example/guilds-sandbox:7", "GUILDS_SANDBOX_IDLE": "90s",
		"GUILDS_SANDBOX_SCOPE": "dev-1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Sandbox{Driver: SandboxLocal, AllowLocal: true, Image: "registry.example/guilds-sandbox:7", Idle: 90 * time.Second, Scope: "dev-1"}
	if c.Sandbox != want {
		t.Fatalf("sandbox = %+v, want %+v", c.Sandbox, want)
	}
}

func TestSandboxBadValuesNameTheVariable(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"GUILDS_SANDBOX_DRIVER":      {"GUILDS_SANDBOX_DRIVER": "kvm"},
		"GUILDS_SANDBOX_ALLOW_LOCAL": {"GUILDS_SANDBOX_DRIVER": "local"},
		"GUILDS_SANDBOX_IDLE":        {"GUILDS_SANDBOX_IDLE": "soon"},
		"GUILDS_SANDBOX_SCOPE":       {"GUILDS_SANDBOX_SCOPE": "a b"},
		"GUILDS_SANDBOX_IMAGE":       {"GUILDS_SANDBOX_IMAGE": "a b"},
		"GUILDS_SANDBOX_POOL":        {"GUILDS_SANDBOX_POOL": "many"},
	} {
		if _, err := Load(env(vars)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: err = %v, want one naming %s", vars, err, name)
		}
	}
	if _, err := Load(env(map[string]string{"GUILDS_SANDBOX_ALLOW_LOCAL": "yes"})); err == nil || !strings.Contains(err.Error(), "GUILDS_SANDBOX_ALLOW_LOCAL") {
		t.Errorf("allow local = yes: err = %v", err)
	}
	if _, err := Load(env(map[string]string{"GUILDS_SANDBOX_IDLE": "10ms"})); err == nil {
		t.Error("an idle time under a second is accepted")
	}
	for _, v := range []string{"-1", "201"} {
		if _, err := Load(env(map[string]string{"GUILDS_SANDBOX_POOL": v})); err == nil {
			t.Errorf("GUILDS_SANDBOX_POOL=%s is accepted", v)
		}
	}
	c, err := Load(env(map[string]string{"GUILDS_SANDBOX_POOL": "20"}))
	if err != nil || c.Sandbox.Pool != 20 {
		t.Fatalf("GUILDS_SANDBOX_POOL=20: pool %d, err %v", c.Sandbox.Pool, err)
	}
}

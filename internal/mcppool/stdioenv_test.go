package mcppool

import (
	"slices"
	"testing"
)

// A connection's environment adds to the allowed platform variables but never
// replaces them nor reaches the dynamic loader.
func TestStdioEnvironKeepsPlatformVariables(t *testing.T) {
	platform := map[string]string{"PATH": "/usr/bin", "HOME": "/home/guilds", "DATABASE_URL": "postgres://secret"}
	got := stdioEnviron(func(k string) string { return platform[k] },
		[]string{"ACME_API_BASE=https://api.acme.test", "PATH=/tmp/evil", "LD_PRELOAD=/tmp/evil.so", "DYLD_INSERT_LIBRARIES=x", "=x", "NOEQUALS"})
	want := []string{"PATH=/usr/bin", "HOME=/home/guilds", "ACME_API_BASE=https://api.acme.test"}
	if !slices.Equal(got, want) {
		t.Fatalf("environ = %q\nwant      %q", got, want)
	}
}

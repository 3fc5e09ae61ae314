package main

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// TestStartupErrorsHidePasswords: an unreachable or malformed database or
// Redis address is named in the error without its password.
func TestStartupErrorsHidePasswords(t *testing.T) {
	key, _ := secret.GenerateKey("k1")
	t.Setenv("GUILDS_ENCRYPTION_KEY", key)
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	good := testdb.URL(t)
	for _, tc := range []struct{ db, redis string }{
		{"host=127.0.0.1 port=1 user=postgres password=pg-s3cret-pw dbname=guilds connect_timeout=2", "redis://127.0.0.1:6379/5"},
		{"host=127.0.0.1 port=1 user=postgres password='pg-s3cret-pw x' dbname=guilds connect_timeout=2", "redis://127.0.0.1:6379/5"},
		{"postgres://postgres:pg-s3cret-pw@127.0.0.1:1/guilds?connect_timeout=2", "redis://127.0.0.1:6379/5"},
		{"host=127.0.0.1 port=notaport password=pg-s3cret-pw", "redis://127.0.0.1:6379/5"},
		{good, "redis://:redis-s3cret-pw@127.0.0.1:notaport/0"},
		{good, "redis://:redis-s3cret-pw@127.0.0.1:1/0"},
	} {
		t.Setenv("DATABASE_URL", tc.db)
		t.Setenv("REDIS_URL", tc.redis)
		code, _, stderr := runCmd(t, "", "serve")
		if code == 0 || strings.Contains(stderr, "s3cret") || stderr == "" {
			t.Errorf("db %q redis %q: exit %d, stderr %q", tc.db, tc.redis, code, stderr)
		}
	}
}

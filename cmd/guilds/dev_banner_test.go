package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/config"
)

// A restart prints no token, so the banner says how to mint one; in local mode
// there is nothing to say.
func TestDevBannerAfterTheFirstStart(t *testing.T) {
	cfg := config.Config{HTTPAddr: "127.0.0.1:8080", DatabaseURL: "postgres://u:secret@db/guilds", AuthMode: "token"}
	var first, later, local bytes.Buffer
	printDevBanner(&first, cfg, "ui", "gld_abc")
	printDevBanner(&later, cfg, "ui", "")
	cfg.AuthMode = "local"
	printDevBanner(&local, cfg, "ui", "")
	if !strings.Contains(first.String(), "gld_abc") {
		t.Errorf("first start: %s", first.String())
	}
	if !strings.Contains(later.String(), "guilds tokens create --admin") || strings.Contains(later.String(), "gld_") {
		t.Errorf("restart: %s", later.String())
	}
	if strings.Contains(local.String(), "Admin token") {
		t.Errorf("local mode: %s", local.String())
	}
	for _, out := range []string{first.String(), later.String(), local.String()} {
		if strings.Contains(out, "secret") {
			t.Errorf("database password printed: %s", out)
		}
	}
}

// The banner shows where the database and Redis are, never their passwords,
// whichever form the address takes.
func TestDevBannerHidesEveryPasswordForm(t *testing.T) {
	for _, cfg := range []config.Config{
		{DatabaseURL: "host=db user=u password=db-s3cret dbname=guilds", RedisURL: "redis://:redis-s3cret@cache:6379/0"},
		{DatabaseURL: "host=db password='db-s3cret x' dbname=guilds", RedisURL: "rediss://default:redis-s3cret@cache:6380/0"},
		{DatabaseURL: "postgres://db/guilds?password=db-s3cret", RedisURL: "unix://u:redis-s3cret@/run/redis.sock"},
	} {
		cfg.HTTPAddr, cfg.AuthMode = "127.0.0.1:8080", "token"
		var out bytes.Buffer
		printDevBanner(&out, cfg, "ui", "")
		if strings.Contains(out.String(), "s3cret") || strings.Count(out.String(), "***") != 2 {
			t.Errorf("banner:\n%s", out.String())
		}
	}
}

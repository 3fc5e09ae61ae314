// Package config reads the process configuration from the environment.
// Every variable has the same name in the README, deploy/compose.yaml and error messages.
package config

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// Config is the environment of a guilds process.
type Config struct {
	DatabaseURL     string // DATABASE_URL
	RedisURL        string // REDIS_URL
	TemporalAddress string // TEMPORAL_ADDRESS; empty in `guilds dev` means "start a dev server"
	TemporalNS      string // TEMPORAL_NAMESPACE
	HTTPAddr        string // GUILDS_HTTP_ADDR
	AuthMode        string // GUILDS_AUTH_MODE: "token" or "local"
	EncryptionKey   string // GUILDS_ENCRYPTION_KEY
	PublicBaseURL   string // PUBLIC_BASE_URL
	DataDir         string // GUILDS_DATA_DIR, where `guilds dev` keeps its state
	// SealPayloads (GUILDS_TEMPORAL_CODEC=encrypt) encrypts what crosses the
	// Temporal boundary with the credential keyring.
	SealPayloads bool
}

// Defaults used when a variable is unset.
const (
	DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/guilds?sslmode=disable"
	DefaultRedisURL    = "redis://127.0.0.1:6379/0"
	DefaultHTTPAddr    = "127.0.0.1:8080"
	DefaultNamespace   = "default"
)

// Load reads the configuration; getenv is os.Getenv outside tests.
func Load(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	or := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		DatabaseURL:     or("DATABASE_URL", DefaultDatabaseURL),
		RedisURL:        or("REDIS_URL", DefaultRedisURL),
		TemporalAddress: or("TEMPORAL_ADDRESS", ""),
		TemporalNS:      or("TEMPORAL_NAMESPACE", DefaultNamespace),
		HTTPAddr:        or("GUILDS_HTTP_ADDR", DefaultHTTPAddr),
		AuthMode:        or("GUILDS_AUTH_MODE", "token"),
		EncryptionKey:   getenv("GUILDS_ENCRYPTION_KEY"),
		PublicBaseURL:   strings.TrimRight(or("PUBLIC_BASE_URL", ""), "/"),
		DataDir:         or("GUILDS_DATA_DIR", ".data"),
	}
	switch codec := or("GUILDS_TEMPORAL_CODEC", "none"); codec {
	case "none":
	case "encrypt":
		c.SealPayloads = true
	default:
		return c, fmt.Errorf("GUILDS_TEMPORAL_CODEC must be none or encrypt, got %q", codec)
	}
	if c.AuthMode != "token" && c.AuthMode != "local" {
		return c, fmt.Errorf("GUILDS_AUTH_MODE must be token or local, got %q", c.AuthMode)
	}
	if c.AuthMode == "local" && !Loopback(c.HTTPAddr) {
		return c, fmt.Errorf("GUILDS_AUTH_MODE=local needs GUILDS_HTTP_ADDR on loopback only (got %q)", c.HTTPAddr)
	}
	return c, nil
}

// Loopback reports whether a listen address binds only loopback interfaces.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

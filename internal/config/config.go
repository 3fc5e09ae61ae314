// Package config reads the process configuration from the environment.
// Every variable has the same name in the README, deploy/compose.yaml and error messages.
package config

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
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
	// Sandbox is where agents' workspaces run.
	Sandbox Sandbox
	// Worker sizes the Temporal worker (worker.go).
	Worker Worker
	// Limits caps the shared resources per organisation and per box (limits.go).
	Limits Limits
	// DBMaxConns (GUILDS_DB_MAX_CONNS) is the connection pool's size; 0
	// keeps the store's default (max(8, 4 × cores)). See PoolURL.
	DBMaxConns int
	// Group bounds agents answering agents in group chat (group.go).
	Group Group
	// Breaker tunes the circuit breaker of each login (breaker.go).
	Breaker Breaker
	// AuditRetentionDays (GUILDS_AUDIT_RETENTION_DAYS, default 90) is how
	// long the audit trail keeps an event; a daily job prunes older ones.
	AuditRetentionDays int
}

// Sandbox configures the agents' workspace sandboxes (internal/workspaces).
// The docker driver reads DOCKER_HOST and the other DOCKER_* variables itself.
type Sandbox struct {
	Driver     string        // GUILDS_SANDBOX_DRIVER: "docker" or "local"
	AllowLocal bool          // GUILDS_SANDBOX_ALLOW_LOCAL=1: consent to the local driver, which isolates nothing
	Image      string        // GUILDS_SANDBOX_IMAGE
	Idle       time.Duration // GUILDS_SANDBOX_IDLE: an unused sandbox is stopped after this long
	Scope      string        // GUILDS_SANDBOX_SCOPE: label separating platforms that share an engine
	Pool       int           // GUILDS_SANDBOX_POOL: sandboxes created ahead of time for agents' first calls (0 = none)
}

// Sandbox defaults.
const (
	SandboxDocker       = "docker"
	SandboxLocal        = "local"
	DefaultSandboxImage = "guilds-sandbox:latest"
	DefaultSandboxIdle  = 15 * time.Minute
	DefaultSandboxScope = "guilds"
	// MaxSandboxPool bounds GUILDS_SANDBOX_POOL: each waiting sandbox is
	// a container on the engine.
	MaxSandboxPool = 200
)

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
	sb, err := loadSandbox(or)
	if err != nil {
		return c, err
	}
	c.Sandbox = sb
	if c.Worker, err = loadWorker(or); err != nil {
		return c, err
	}
	if c.Limits, err = loadLimits(or); err != nil {
		return c, err
	}
	if c.DBMaxConns, err = loadDBMaxConns(or, c.DatabaseURL); err != nil {
		return c, err
	}
	if c.Group, err = loadGroup(or); err != nil {
		return c, err
	}
	if c.Breaker, err = loadBreaker(or); err != nil {
		return c, err
	}
	if c.AuditRetentionDays, err = loadAuditRetention(or); err != nil {
		return c, err
	}
	if c.AuthMode != "token" && c.AuthMode != "local" {
		return c, fmt.Errorf("GUILDS_AUTH_MODE must be token or local, got %q", c.AuthMode)
	}
	if c.AuthMode == "local" && !Loopback(c.HTTPAddr) {
		return c, fmt.Errorf("GUILDS_AUTH_MODE=local needs GUILDS_HTTP_ADDR on loopback only (got %q)", c.HTTPAddr)
	}
	return c, nil
}

var scopePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

func loadSandbox(or func(name, def string) string) (Sandbox, error) {
	s := Sandbox{
		Driver: or("GUILDS_SANDBOX_DRIVER", SandboxDocker),
		Image:  or("GUILDS_SANDBOX_IMAGE", DefaultSandboxImage),
		Scope:  or("GUILDS_SANDBOX_SCOPE", DefaultSandboxScope),
	}
	switch v := or("GUILDS_SANDBOX_ALLOW_LOCAL", "0"); v {
	case "0", "false":
	case "1", "true":
		s.AllowLocal = true
	default:
		return s, fmt.Errorf("GUILDS_SANDBOX_ALLOW_LOCAL must be 1 or 0, got %q", v)
	}
	switch s.Driver {
	case SandboxDocker:
	case SandboxLocal:
		if !s.AllowLocal {
			return s, fmt.Errorf("GUILDS_SANDBOX_DRIVER=local runs agents' commands on this host without any isolation: set GUILDS_SANDBOX_ALLOW_LOCAL=1 to allow it (development only)")
		}
	default:
		return s, fmt.Errorf("GUILDS_SANDBOX_DRIVER must be docker or local, got %q", s.Driver)
	}
	idle := or("GUILDS_SANDBOX_IDLE", DefaultSandboxIdle.String())
	d, err := time.ParseDuration(idle)
	if err != nil || d < time.Second {
		return s, fmt.Errorf("GUILDS_SANDBOX_IDLE must be a duration of at least 1s such as 15m, got %q", idle)
	}
	s.Idle = d
	pool := or("GUILDS_SANDBOX_POOL", "0")
	n, err := strconv.Atoi(pool)
	if err != nil || n < 0 || n > MaxSandboxPool {
		return s, fmt.Errorf("GUILDS_SANDBOX_POOL must be a number of sandboxes from 0 to %d, got %q", MaxSandboxPool, pool)
	}
	s.Pool = n
	if !scopePattern.MatchString(s.Scope) {
		return s, fmt.Errorf("GUILDS_SANDBOX_SCOPE must be letters, digits, '_', '.' or '-' (at most 63, starting with a letter or digit), got %q", s.Scope)
	}
	if strings.ContainsAny(s.Image, " \t\n") {
		return s, fmt.Errorf("GUILDS_SANDBOX_IMAGE must be an image reference without spaces, got %q", s.Image)
	}
	return s, nil
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

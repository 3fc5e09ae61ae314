package workspaces

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/sandbox/docker"
	"github.com/guilds/guilds/sandbox/local"
)

// FromConfig builds the manager the configuration asks for: the docker
// driver (DOCKER_HOST and the other DOCKER_* variables pick the engine) or,
// when explicitly allowed, the local one with its sandboxes under
// <GUILDS_DATA_DIR>/sandboxes. Nothing contacts the engine yet; the first
// CleanupOrphans or Exec does. Close releases the driver too.
func FromConfig(cfg config.Config, log *slog.Logger) (*Manager, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sc := cfg.Sandbox
	opts := Options{Image: sc.Image, Idle: sc.Idle, Logger: log,
		MaxSandboxes: cfg.Limits.MaxSandboxes, MaxPerOrg: cfg.Limits.MaxSandboxesPerOrg,
		MaxHomeBytes: int64(cfg.Limits.MaxHomeGB) << 30}
	var m *Manager
	switch sc.Driver {
	case config.SandboxDocker, "":
		chanDir, err := channelDir(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		poolDir := ""
		if chanDir != "" {
			// Per scope: a pool's start detaches whatever is left under its
			// folder, which must never be another worker's.
			poolDir = filepath.Join(filepath.Dir(chanDir), "sandbox-pool", sc.Scope)
		}
		d, err := docker.New(docker.Options{Scope: sc.Scope, Logger: log, ChannelDir: chanDir, PoolDir: poolDir})
		if err != nil {
			return nil, fmt.Errorf("GUILDS_SANDBOX_DRIVER=docker: %w", err)
		}
		m = New(d, opts)
		m.closer = d
	case config.SandboxLocal:
		if !sc.AllowLocal {
			return nil, fmt.Errorf("GUILDS_SANDBOX_DRIVER=local needs GUILDS_SANDBOX_ALLOW_LOCAL=1: %w", local.ErrDisabled)
		}
		d, err := local.New(local.Options{
			AllowUnisolated: true,
			Root:            filepath.Join(cfg.DataDir, "sandboxes"),
			Scope:           sc.Scope,
			Logger:          log,
		})
		if err != nil {
			return nil, fmt.Errorf("GUILDS_SANDBOX_DRIVER=local: %w", err)
		}
		log.Warn("agent sandboxes run on this host WITHOUT isolation (GUILDS_SANDBOX_DRIVER=local); development only")
		m = New(d, opts)
	default:
		return nil, fmt.Errorf("GUILDS_SANDBOX_DRIVER must be docker or local, got %q", sc.Driver)
	}
	return m, nil
}

// channelDir is where the docker driver keeps the sandboxes' command
// channels (ADR 0711): under the data folder when the engine listens on a
// Unix socket of this host (DOCKER_HOST unset or unix://), so it can mount
// them; none for a remote engine, whose sandboxes take the engine's exec.
func channelDir(dataDir string) (string, error) {
	if h := os.Getenv("DOCKER_HOST"); h != "" && !strings.HasPrefix(h, "unix://") {
		return "", nil
	}
	dir, err := filepath.Abs(filepath.Join(dataDir, "sandbox-channels"))
	if err != nil {
		return "", fmt.Errorf("sandbox channel folder: %w", err)
	}
	return dir, nil
}

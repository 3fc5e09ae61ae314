package mcppool

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// stdioBaseEnv names the variables of the platform's own environment a stdio
// server it runs may see. Everything else — the database URL, the encryption
// keys, model and integration keys — stays in the orchestrator.
var stdioBaseEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// stdioCommand builds a stdio server's process with only the allowed platform
// variables plus the connection's own (env, the values its provider injects),
// never the whole os.Environ(), as another user when the orchestrator is root
// (stdioSysProcAttr).
func stdioCommand(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, command, args...) //nolint:gosec // G204: running the catalog's stdio server command is this function's job; its environment and user are confined below
	cmd.Env = stdioEnviron(os.Getenv, env)
	cmd.SysProcAttr = stdioSysProcAttr()
	if cmd.SysProcAttr.Credential != nil {
		cmd.Dir = "/" // the orchestrator's working directory may be closed to that user
		cmd.Env = withHome(cmd.Env, stdioHome())
	}
	return cmd, nil
}

func stdioEnviron(getenv func(string) string, env []string) []string {
	out := make([]string, 0, len(stdioBaseEnv)+len(env))
	for _, name := range stdioBaseEnv {
		if v := getenv(name); v != "" {
			out = append(out, name+"="+v)
		}
	}
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if ok && name != "" && !platformOwned(name) {
			out = append(out, kv)
		}
	}
	return out
}

// platformOwned: a connection's values never replace the platform's own
// variables nor steer the dynamic loader (the configured provider already
// refuses such names; this holds for any provider).
func platformOwned(name string) bool {
	return slices.Contains(stdioBaseEnv, name) || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_")
}

// withHome replaces HOME (the orchestrator's) with home, or drops it.
func withHome(env []string, home string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	if home != "" {
		out = append(out, "HOME="+home)
	}
	return out
}

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
// never the whole os.Environ().
func stdioCommand(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, command, args...)
	cmd.Env = stdioEnviron(os.Getenv, env)
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

package mcppool

import (
	"context"
	"os"
	"os/exec"
	"strings"
)

// stdioBaseEnv names the variables of the platform's own environment a stdio
// server it runs may see. Everything else — the database URL, the encryption
// keys, model and integration keys — stays in the orchestrator.
var stdioBaseEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// stdioCommand builds a stdio server's process with only the allowed platform
// variables plus the connection's own (env), never the whole os.Environ().
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
		if strings.Contains(kv, "=") {
			out = append(out, kv)
		}
	}
	return out
}

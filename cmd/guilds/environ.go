package main

import (
	"os"
	"strings"

	"github.com/guilds/guilds/internal/integrations"
)

// environment is the process environment as it was at start-up. The
// platform reads its variables through it, so that the credential-bearing
// ones can leave the live environment (forgetCredentials) and still be found
// when a connector reads its client secret lazily.
type environment map[string]string

func snapshotEnvironment() environment {
	env := environment{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// Getenv is os.Getenv on the snapshot.
func (e environment) Getenv(name string) string { return e[name] }

// credentialSuffixes mark a variable as credential-bearing by its name; an
// OAuth row's client_secret_env names its own variable, so names alone decide.
var credentialSuffixes = []string{"_KEY", "_SECRET", "_TOKEN", "_PASSWORD", "_DSN", "_URL"}

// credentialVariables lists the variables to drop from the live
// environment: the encryption key, the database and Redis addresses (they
// carry passwords), every integration's required variables and any name that
// looks like a credential. Base URLs and other *_URL settings hold no secret
// but are read through the snapshot too, so dropping them costs nothing.
func credentialVariables(env environment) []string {
	names := map[string]bool{"GUILDS_ENCRYPTION_KEY": true, "DATABASE_URL": true, "REDIS_URL": true, "PGPASSWORD": true}
	for _, in := range integrations.Catalog {
		for _, v := range in.Required {
			names[v] = true
		}
	}
	for name := range env {
		for _, s := range credentialSuffixes {
			if strings.HasSuffix(name, s) {
				names[name] = true
			}
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	return out
}

// forgetCredentials removes the credential-bearing variables from the live
// environment once the platform has read them, so that a child process
// started with the default environment (os/exec's os.Environ()) does not
// inherit them. It cannot change /proc/self/environ, which shows the
// environment the process was started with.
func forgetCredentials(env environment) {
	for _, name := range credentialVariables(env) {
		_ = os.Unsetenv(name)
	}
}

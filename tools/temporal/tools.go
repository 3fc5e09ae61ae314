//go:build tools

// Package temporal pins the Temporal CLI used as the development and test server.
// It lives in its own module so the server's large dependency tree stays out of
// the main go.mod.
package temporal

import _ "github.com/temporalio/cli/cmd/temporal"

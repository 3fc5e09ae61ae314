//go:build tools

// Package lint pins the linters `make lint` runs, in a module of their own so
// their dependencies never enter the platform's go.mod.
package lint

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
	_ "go.temporal.io/sdk/contrib/tools/workflowcheck"
)

//go:build tools

// Package tools pins gopls, the Go language server the harness measures
// the code graph against.
package tools

import _ "golang.org/x/tools/gopls"

//go:build tools

// Package helm pins the Helm CLI that `make helm-check` lints and renders the
// chart in deploy/helm/guilds with, in a module of its own so Helm's and
// Kubernetes' dependencies never enter the platform's go.mod. The chart's
// manifest validator (kubecheck) lives here for the same reason.
package helm

import _ "helm.sh/helm/v3/cmd/helm"

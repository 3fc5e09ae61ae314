// Package e2e tests the platform as it is deployed: `guilds migrate up`, then
// `guilds serve` and `guilds worker` as separate processes of one binary, on a
// fresh database and Temporal namespace, driven only through the HTTP API with
// a scripted model and real peers. Each capability adds its path here.
package e2e

//go:build !linux

package process

// NonDumpable is Linux-only; elsewhere the platform runs for development.
func NonDumpable() error { return nil }

package codeops

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
)

// BenchmarkShellCall is one shell tool call through the helper's code path
// (log file, cwd carried over, shaping), against BenchmarkBareBash, the
// same command run with bash -c.
//
//	go test ./internal/codeops -run '^$' -bench 'ShellCall|BareBash' -count 6 | benchstat -
func BenchmarkShellCall(b *testing.B) {
	env := testEnv(b)
	args := json.RawMessage(`{"command":"echo hello; ls >/dev/null"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := Shell(context.Background(), env, args); res.Text != "hello" {
			b.Fatalf("%q", res.Text)
		}
	}
}

func BenchmarkBareBash(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		cmd := exec.Command("bash", "-c", "echo hello; ls >/dev/null")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "hello\n" {
			b.Fatalf("%q %v", out, err)
		}
	}
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/testdb"
)

// asMain runs `guilds args…` as its own process with exactly env (plus PATH).
func asMain(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append([]string{asMainEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// The database address can come from a file (DATABASE_URL_FILE), so that it
// never sits in the environment the process starts with; a file and a
// variable both set, or a file that cannot be read, stop the process with an
// error that names the setting.
func TestSettingsReadFromFiles(t *testing.T) {
	dir := t.TempDir()
	url := testdb.URL(t)
	file := filepath.Join(dir, "database-url")
	if err := os.WriteFile(file, []byte(url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := asMain(t, []string{"DATABASE_URL_FILE=" + file}, "migrate", "status")
	if code != 0 || !strings.Contains(stdout, "applied") {
		t.Fatalf("migrate status with DATABASE_URL_FILE: exit %d\n%s\n%s", code, stdout, stderr)
	}

	code, _, stderr = asMain(t, []string{"DATABASE_URL_FILE=" + file, "DATABASE_URL=" + url}, "migrate", "status")
	if code != 2 || !strings.Contains(stderr, "DATABASE_URL and DATABASE_URL_FILE are both set") {
		t.Fatalf("both set: exit %d, %s", code, stderr)
	}
	code, _, stderr = asMain(t, []string{"GUILDS_ENCRYPTION_KEY_FILE=" + filepath.Join(dir, "missing")}, "migrate", "status")
	if code != 2 || !strings.Contains(stderr, "GUILDS_ENCRYPTION_KEY_FILE") {
		t.Fatalf("missing file: exit %d, %s", code, stderr)
	}
	if strings.Contains(stderr, url) {
		t.Fatal("an error quoted a file's content")
	}
}

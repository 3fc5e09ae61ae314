package helper_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guilds/guilds/sandbox/helper"
)

type named struct {
	Tool string `json:"tool"`
}

func (n named) Validate() error {
	if n.Tool == "" {
		return errors.New("request names no tool")
	}
	return nil
}

// A request file is read by its sandbox path or its place on the helper's
// filesystem, and deleted once read even when it does not decode; a path
// outside the request folder is refused.
func TestReadRequestFiles(t *testing.T) {
	root := t.TempDir()
	t.Setenv(helper.SandboxRootEnv, root)
	dir := filepath.Join(root, helper.RequestDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := helper.ReadOptions{MaxFile: 1 << 10}
	write("a.json", `{"tool":"t"}`)
	if r, err := helper.Read[named]("@"+helper.RequestDir+"/a.json", o); err != nil || r.Tool != "t" {
		t.Fatalf("by sandbox path: %+v %v", r, err)
	}
	write("b.json", `{"tool":"t"}`)
	if r, err := helper.Read[named]("@"+filepath.Join(dir, "b.json"), o); err != nil || r.Tool != "t" {
		t.Fatalf("by host path: %+v %v", r, err)
	}
	write("c.json", `{}`)
	if _, err := helper.Read[named]("@"+helper.RequestDir+"/c.json", o); err == nil || !strings.Contains(err.Error(), "names no tool") {
		t.Fatalf("no tool: %v", err)
	}
	write("d.json", strings.Repeat(" ", 2<<10))
	if _, err := helper.Read[named]("@"+helper.RequestDir+"/d.json", o); err == nil || !strings.Contains(err.Error(), "byte limit") {
		t.Fatalf("too long: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	for arg, want := range map[string]string{
		"not base64!":                   "neither JSON nor base64",
		"@/etc/passwd":                  "is not a file directly under /run/guilds/requests",
		"@/run/guilds/requests/../x":    "is not a file directly under",
		"@/run/guilds/requests/.hidden": "is not a file directly under",
	} {
		if _, err := helper.Read[named](arg, o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
	}
}

package main

import (
	"strings"
	"testing"
)

// help and the migrate usage line name every form migrate accepts, as the README does.
func TestMigrateUsageNamesDownAll(t *testing.T) {
	if _, out, _ := runCmd(t, "", "help"); !strings.Contains(out, "down [N|all]") {
		t.Errorf("help: %s", out)
	}
	if _, _, stderr := runCmd(t, "", "migrate"); !strings.Contains(stderr, "down [N|all]") {
		t.Errorf("migrate usage: %s", stderr)
	}
}

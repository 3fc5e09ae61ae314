package tools

import (
	"context"
	"testing"
)

func TestMetadata(t *testing.T) {
	SetMetadata(context.Background(), "ignored", 1) // outside a call: no effect, no panic
	ctx, got := WithMetadata(context.Background())
	if got() != nil {
		t.Fatal("nothing recorded yet")
	}
	SetMetadata(ctx, "exit_code", 2)
	SetMetadata(ctx, "path", "a.txt")
	SetMetadata(ctx, "exit_code", 3)
	m := got()
	if len(m) != 2 || m["exit_code"] != 3 || m["path"] != "a.txt" {
		t.Fatalf("metadata %v", m)
	}
	m["path"] = "changed"
	if got()["path"] != "a.txt" {
		t.Fatal("the returned map must be a copy")
	}
}

package adapters_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
)

type echoArgs struct {
	Limit int `json:"limit"`
}

// Dispatch names the adapter for an unknown tool and the tool for arguments
// that do not decode; absent or null arguments are the zero value.
func TestDispatch(t *testing.T) {
	table := map[string]string{"search": "the search handler"}
	if _, _, err := adapters.Dispatch[string, echoArgs]("demo", table, "nope", nil); err == nil || err.Error() != `demo has no tool "nope"` {
		t.Fatalf("unknown tool: %v", err)
	}
	if _, _, err := adapters.Dispatch[string, echoArgs]("demo", table, "search", json.RawMessage(`{"limit":"ten"}`)); err == nil ||
		!strings.HasPrefix(err.Error(), "search: bad arguments: ") {
		t.Fatalf("bad arguments: %v", err)
	}
	for _, raw := range []string{"", "null", `{"limit":3}`} {
		h, in, err := adapters.Dispatch[string, echoArgs]("demo", table, "search", json.RawMessage(raw))
		want := 0
		if raw != "" && raw != "null" {
			want = 3
		}
		if err != nil || h != "the search handler" || in.Limit != want {
			t.Fatalf("Dispatch(%q) = %q, %+v, %v", raw, h, in, err)
		}
	}
}

// Rejection turns a 401 or 403 answer into ErrRejected and keeps others.
func TestRejection(t *testing.T) {
	if err := adapters.Rejection(&adapters.HTTPError{Status: 403}); !errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("403: %v", err)
	}
	other := &adapters.HTTPError{Status: 500}
	if err := adapters.Rejection(other); err != other {
		t.Fatalf("500: %v", err)
	}
	if adapters.Rejection(nil) != nil {
		t.Fatal("nil is not nil")
	}
}

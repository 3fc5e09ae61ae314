package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestFailureDetailIsRedactedInTheLog(t *testing.T) {
	const secret = "sk-live-echoed-0123456789"
	var logs bytes.Buffer
	reg := NewRegistry(WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	reg.Register(Tool{Name: "leaky", Description: "fails with its key in the error",
		Schema: json.RawMessage(`{"type":"object","properties":{"panic":{"type":"boolean"}}}`),
		Handler: func(_ context.Context, c Call) (string, error) {
			if strings.Contains(string(c.Args), "true") {
				panic("upstream said: bad key " + secret)
			}
			return "", errors.New("upstream said: bad key " + secret)
		}})
	ctx := WithLogRedactor(context.Background(), NewRedactor([]string{secret}, nil))
	for _, args := range []string{`{}`, `{"panic":true}`} {
		out := reg.Invoke(ctx, Call{Name: "leaky", Args: json.RawMessage(args)})
		if !strings.HasPrefix(out, "ERROR: ") {
			t.Fatalf("result %q", out)
		}
	}
	if strings.Contains(logs.String(), secret) || strings.Count(logs.String(), RedactionMarker) != 2 {
		t.Fatalf("log: %s", logs.String())
	}
}

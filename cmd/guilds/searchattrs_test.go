package main

import (
	"context"
	"io"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"

	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/devserver"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
)

// TestStartRegistersSearchAttributes: serve and worker on a namespace that
// was created without the Guilds search attributes register them at start,
// and a run then starts instead of answering 500.
func TestStartRegistersSearchAttributes(t *testing.T) {
	if testing.Short() {
		t.Skip("uses a Temporal server")
	}
	ns := testtemporal.Namespace(t)
	key, _ := secret.GenerateKey("k1")
	t.Setenv("DATABASE_URL", testdb.URL(t))
	t.Setenv("REDIS_URL", "redis://127.0.0.1:6379/5")
	t.Setenv("GUILDS_ENCRYPTION_KEY", key)
	t.Setenv("TEMPORAL_ADDRESS", testtemporal.Address(t))
	t.Setenv("TEMPORAL_NAMESPACE", ns)
	t.Setenv("OPENROUTER_API_KEY", "sk-or-test-0123456789")
	code, out, stderr := runCmd(t, "", "tokens", "create", "--admin")
	if code != 0 {
		t.Fatalf("tokens create: %s", stderr)
	}
	cfg, err := config.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := openPlatform(context.Background(), cfg, newLogger(io.Discard), false)
	if err != nil {
		t.Fatalf("start on a namespace without the search attributes: %v", err)
	}
	defer p.close()
	resp, err := p.temporal.OperatorService().ListSearchAttributes(context.Background(),
		&operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range runSearchAttributes {
		if resp.GetCustomAttributes()[k.GetName()] != enumspb.INDEXED_VALUE_TYPE_KEYWORD {
			t.Errorf("%s not registered: %v", k.GetName(), resp.GetCustomAttributes())
		}
	}
	call := serveAPI(t, p, strings.TrimSpace(out))
	var started map[string]any
	call("POST", "/api/agents/"+newAgent(call)+"/runs", map[string]any{"message": "hello"}, &started)

	// A second start finds them all and changes nothing.
	if err := ensureSearchAttributes(context.Background(), p.temporal, ns); err != nil {
		t.Fatalf("second start: %v", err)
	}
}

// TestSearchAttributesMatchTheDevServer: the dev server registers at its
// start the same attributes serve and worker check.
func TestSearchAttributesMatchTheDevServer(t *testing.T) {
	var want []string
	for _, k := range runSearchAttributes {
		want = append(want, k.GetName()+"="+k.GetValueType().String())
	}
	if strings.Join(want, " ") != strings.Join(devserver.SearchAttributes, " ") {
		t.Fatalf("run workflow %v, dev server %v", want, devserver.SearchAttributes)
	}
}

func TestSearchAttributeCommandIsRunnable(t *testing.T) {
	got := createCommand("prod", map[string]enumspb.IndexedValueType{"GuildsGuild": enumspb.INDEXED_VALUE_TYPE_KEYWORD, "GuildsAgent": enumspb.INDEXED_VALUE_TYPE_KEYWORD})
	want := "`temporal operator search-attribute create --namespace prod --name GuildsAgent --type Keyword --name GuildsGuild --type Keyword`"
	if got != want {
		t.Fatalf("got %s", got)
	}
}

package api_test

import (
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/testtemporal"
)

// A namespace that lost the Guilds search attributes after start-up (an
// operator removed them) refuses a run start with a 503 that says how to
// restore them, not a 500.
func TestRunStartWithoutSearchAttributesIs503(t *testing.T) {
	if testing.Short() {
		t.Skip("uses the Temporal dev server")
	}
	ns := testtemporal.Namespace(t)
	c, err := client.Dial(client.Options{HostPort: testtemporal.Address(t), Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	opts := withKeyring(t, map[string]string{"OPENROUTER_API_KEY": "sk-or-box-key-0123456789"})
	models := opts.Tweak
	opts.Tweak = func(d *api.Deps) { models(d); d.Temporal = c }
	e := apitest.New(t, opts)
	_, _, agent := e.Hierarchy()
	r := e.Admin("POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "hello"})
	if r.Status != 503 || r.ErrorCode() != "temporal_not_ready" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

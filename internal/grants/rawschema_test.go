package grants_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// A 2020-12 schema with $defs, $ref, $anchor, prefixItems,
// unevaluatedProperties and dependentRequired.
const rawSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
 "properties":{"address":{"$ref":"#/$defs/addr"},"tags":{"type":"array","prefixItems":[{"type":"string"}],"items":false},
  "amount":{"$ref":"#amount"}},
 "required":["address"],
 "$defs":{"addr":{"type":"string","pattern":"^0x[0-9a-f]{4}$"},"amount":{"$anchor":"amount","type":"number","exclusiveMinimum":0}},
 "unevaluatedProperties":false,"dependentRequired":{"amount":["address"]}}`

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// A listed tool's schema is stored and offered for argument checks as the
// server listed it (every keyword, $defs and $ref kept); only the copy the
// model sees is shaped. A schema whose $ref names a network address is never
// fetched: the tool is left out with a warning, its stored schema untouched.
func TestListedSchemaIsKeptRawAndNetworkRefsAreNeverFetched(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	var fetched atomic.Int64
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetched.Add(1)
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer remote.Close()
	org, _, agent := hierarchy(t, db)
	c, _, err := connections.Connect(ctx, db, admin, nil, connections.ConnectInput{Slug: "wallet", OwnerScope: grants.ScopeOrganisation, OwnerID: org.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := connections.MarkConnected(ctx, db, c.ID, "0xab…cd"); err != nil {
		t.Fatal(err)
	}
	networkRef := `{"type":"object","properties":{"to":{"$ref":"` + remote.URL + `/address.json"}}}`
	relativeRef := `{"$id":"` + remote.URL + `/schemas/root.json","type":"object","properties":{"to":{"$ref":"address.json"}}}`
	list := []grants.ListedTool{{Name: "get_balance", Schema: json.RawMessage(rawSchema)},
		{Name: "get_price", Schema: json.RawMessage(networkRef)}, {Name: "get_quote", Schema: json.RawMessage(relativeRef)}}
	if err := grants.SyncListedTools(ctx, db, c.ID, list); err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		var stored json.RawMessage
		if err := db.QueryRow(ctx, `SELECT input_schema FROM mcp_tools WHERE connection_id = $1 AND remote_name = $2`, c.ID, l.Name).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, stored, l.Schema) {
			t.Errorf("%s stored as %s", l.Name, stored)
		}
	}
	o, err := grants.NewService(grantstest.Registry(), nil, nil).Offered(ctx, db, agent.ID, grants.TriggerDirect)
	if err != nil {
		t.Fatal(err)
	}
	var bal *grants.OfferedTool
	for i := range o.Tools {
		switch o.Tools[i].Name {
		case "wallet_get_balance":
			bal = &o.Tools[i]
		case "wallet_get_price", "wallet_get_quote":
			t.Errorf("%s offered with an unresolvable network $ref", o.Tools[i].Name)
		}
	}
	if bal == nil {
		t.Fatalf("wallet_get_balance not offered: %v", o.Warnings)
	}
	if !jsonEqual(t, bal.Schema, json.RawMessage(rawSchema)) {
		t.Errorf("the offered schema (for argument checks) is not the listed one: %s", bal.Schema)
	}
	// Shaping drops $schema and unevaluatedProperties from the model's copy
	// (docs/adr/0101); the stored and offered schema keep both.
	if jsonEqual(t, bal.ShapedSchema, json.RawMessage(rawSchema)) || strings.Contains(string(bal.ShapedSchema), "$schema") ||
		strings.Contains(string(bal.ShapedSchema), "unevaluatedProperties") {
		t.Errorf("the model-facing copy is not shaped: %s", bal.ShapedSchema)
	}
	v, err := tools.CompileSchema(bal.Schema)
	if err != nil {
		t.Fatal(err)
	}
	for args, ok := range map[string]bool{`{"address":"0x0abc","amount":2}`: true, `{"address":"0xZZ"}`: false,
		`{"address":"0x0abc","amount":0}`: false, `{"address":"0x0abc","extra":1}`: false} {
		if err := v.Validate(json.RawMessage(args)); (err == nil) != ok {
			t.Errorf("%s: validation %v, want ok=%v ($defs, $anchor and unevaluatedProperties applied)", args, err, ok)
		}
	}
	warned := 0
	for _, w := range o.Warnings {
		if strings.Contains(w, "get_price") || strings.Contains(w, "get_quote") {
			warned++
		}
	}
	if warned != 2 || fetched.Load() != 0 {
		t.Fatalf("network $refs: %d warnings %v, %d fetches", warned, o.Warnings, fetched.Load())
	}
}

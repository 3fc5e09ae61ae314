package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/audit"
)

func TestAuditTrailIsTheOrganisationsOwn(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, _, agent := e.Hierarchy()
	_, annTok := newOperator(t, e, org, "ann")
	rival := e.Admin("POST", "/api/orgs", map[string]any{"name": "Rival", "slug": "rival"}).Map()["id"].(string)
	_, rexTok := newOperator(t, e, rival, "rex")
	ctx := context.Background()
	for i, o := range []string{org, org, rival} {
		if err := audit.Record(ctx, e.DB, audit.Event{OrganisationID: o, AgentID: agent, Action: audit.ActionToolCall,
			Tool: "wallet_send", Outcome: "ok", Seq: i + 1, RunID: "00000000-0000-0000-0000-00000000000" + string(rune('1'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	var mine []audit.Event
	r := e.Do(annTok, "GET", "/api/orgs/"+org+"/audit?tool=wallet_send", nil)
	r.JSON(&mine)
	if r.Status != 200 || len(mine) != 2 {
		t.Fatalf("own trail: %d %s", r.Status, r.Body)
	}
	// The query cannot widen the caller's reach.
	if r := e.Do(annTok, "GET", "/api/orgs/"+org+"/audit?organisation_id="+rival, nil); r.Status != 200 || strings.Contains(string(r.Body), rival) {
		t.Fatalf("organisation_id widened the trail: %s", r.Body)
	}
	if r := e.Do(rexTok, "GET", "/api/orgs/"+org+"/audit", nil); r.Status != 404 {
		t.Fatalf("another organisation read the trail: %d", r.Status)
	}
	if r := e.Do(rexTok, "GET", "/api/orgs/"+org+"/audit/export", nil); r.Status != 404 {
		t.Fatalf("another organisation exported the trail: %d", r.Status)
	}
	if r := e.Do(annTok, "GET", "/api/orgs/"+org+"/audit?from=yesterday", nil); r.Status != 400 {
		t.Fatalf("bad filter: %d", r.Status)
	}
	ex := e.Do(annTok, "GET", "/api/orgs/"+org+"/audit/export?tool=wallet_send", nil)
	if ex.Status != 200 || strings.Count(string(ex.Body), "\n") != 2 || strings.Contains(string(ex.Body), rival) {
		t.Fatalf("export: %d %s", ex.Status, ex.Body)
	}
	var all []audit.Event
	e.Admin("GET", "/api/admin/audit", nil).JSON(&all)
	if len(all) != 3 {
		t.Fatalf("the admin sees %d events", len(all))
	}
}

// An operator's switches leave events in the trail, with who wrote them.
func TestBindingChangesAreAudited(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, guild, _ := e.Hierarchy()
	annID, annTok := newOperator(t, e, org, "ann")
	body := map[string]any{"scope": "guild", "scope_id": guild, "catalog_kind": "native_tool", "catalog_id": "note_get", "enabled": false}
	if r := e.Do(annTok, "PUT", "/api/bindings", body); r.Status != 200 {
		t.Fatalf("put binding: %d %s", r.Status, r.Body)
	}
	if r := e.Do(annTok, "DELETE", "/api/bindings", body); r.Status != 204 {
		t.Fatalf("delete binding: %d %s", r.Status, r.Body)
	}
	var got []audit.Event
	e.Do(annTok, "GET", "/api/orgs/"+org+"/audit?action=binding", nil).JSON(&got)
	if len(got) != 2 || got[0].Outcome != "inherit" || got[1].Outcome != "off" || got[1].Tool != "note_get" ||
		got[1].GuildID != guild || got[1].Actor != "user:"+annID {
		t.Fatalf("binding events: %+v", got)
	}
}

package api_test

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/webapp"
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
	if ex := e.Admin("GET", "/api/admin/audit/export", nil); ex.Status != 200 || strings.Count(string(ex.Body), "\n") != 3 {
		t.Fatalf("the admin's export: %d %s", ex.Status, ex.Body)
	}
	// organisation_id narrows the admin's view and export alike.
	var rivals []audit.Event
	e.Admin("GET", "/api/admin/audit?organisation_id="+rival, nil).JSON(&rivals)
	if ex := e.Admin("GET", "/api/admin/audit/export?organisation_id="+rival, nil); len(rivals) != 1 ||
		strings.Count(string(ex.Body), "\n") != 1 || !strings.Contains(string(ex.Body), rival) {
		t.Fatalf("the admin's narrowed trail: %+v %s", rivals, ex.Body)
	}
	// An operator is not the instance admin: the whole box's trail is refused.
	for _, path := range []string{"/api/admin/audit", "/api/admin/audit/export"} {
		if r := e.Do(annTok, "GET", path, nil); r.Status != 403 && r.Status != 404 {
			t.Fatalf("an operator read %s: %d", path, r.Status)
		}
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

// filterFields are audit.Filter's query fields, from its JSON names.
func filterFields(t *testing.T) []string {
	t.Helper()
	var out []string
	ft := reflect.TypeFor[audit.Filter]()
	for i := range ft.NumField() {
		name, _, _ := strings.Cut(ft.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	if len(out) < 10 {
		t.Fatalf("audit.Filter has %d query fields: the tag reading is stale", len(out))
	}
	return out
}

// Every field of the one filter type is read by the view and the export
// alike, for an organisation's operator and for the instance admin: a good
// value narrows (200), a bad one is named (400), on all four routes. Neither
// route can ignore a field the other applies.
func TestEveryFilterFieldReachesViewAndExport(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, _, _ := e.Hierarchy()
	_, annTok := newOperator(t, e, org, "ann")
	good := map[string]string{"from": "2026-12-01T00:00:00Z", "to": "2026-12-02T00:00:00Z", "before": "5", "limit": "10",
		"tool": "x", "action": "binding", "outcome": "ok"}
	bad := map[string]string{"from": "yesterday", "to": "tomorrow", "before": "-1", "limit": "0"}
	for _, f := range filterFields(t) {
		g, ok := good[f]
		if !ok {
			g = "00000000-0000-0000-0000-000000000001"
		}
		b, hasBad := bad[f]
		if !hasBad && strings.HasSuffix(f, "_id") {
			b, hasBad = "not-an-id", true
		}
		for _, r := range []struct{ tok, path string }{
			{annTok, "/api/orgs/" + org + "/audit"}, {annTok, "/api/orgs/" + org + "/audit/export"},
			{e.AdminToken, "/api/admin/audit"}, {e.AdminToken, "/api/admin/audit/export"},
		} {
			if res := e.Do(r.tok, "GET", r.path+"?"+f+"="+g, nil); res.Status != 200 {
				t.Errorf("%s?%s=%s: %d %s", r.path, f, g, res.Status, res.Body)
			}
			if hasBad {
				if res := e.Do(r.tok, "GET", r.path+"?"+f+"="+b, nil); res.Status != 400 || !strings.Contains(string(res.Body), f) {
					t.Errorf("%s?%s=%s: %d %s", r.path, f, b, res.Status, res.Body)
				}
			}
		}
	}
}

// The app builds the view's and the export's query from one list of
// fields; that list is audit.Filter's (paging aside).
func TestAppAuditFieldsAreTheFilter(t *testing.T) {
	a, ok := webapp.Lookup("/pages/audit.js")
	if !ok {
		t.Fatal("no pages/audit.js in the app")
	}
	m := regexp.MustCompile(`export const auditFields = \[([^\]]*)\]`).FindSubmatch(a.Body)
	if m == nil {
		t.Fatal("pages/audit.js declares no auditFields")
	}
	var app []string
	for _, s := range regexp.MustCompile(`"([a-z_]+)"`).FindAllSubmatch(m[1], -1) {
		app = append(app, string(s[1]))
	}
	var want []string
	for _, f := range filterFields(t) {
		if f != "before" && f != "limit" {
			want = append(want, f)
		}
	}
	if !slices.Equal(app, want) {
		t.Fatalf("the app filters by %v, audit.Filter by %v", app, want)
	}
}

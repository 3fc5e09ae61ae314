package api_test

import (
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

// TestCollectionsInChromium: an operator defines a typed collection from
// the app (a bad name is refused in words, on its field), grants it to an
// agent and adds a column later; the API keeps what the app showed.
func TestCollectionsInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	e := apitest.New(t, apitest.Options{Tweak: localMode(t)})
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Local"}).Map()["id"].(string)
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Sales"}).Map()["id"].(string)
	agent := e.Do("", "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scout"}).Map()["id"].(string)

	b := newAppBrowser(t, chromium, e.HTTP.URL)
	b.open("/orgs/" + org + "?tab=collections")
	b.waitText("#collections-empty", "No collection yet. Define one below")
	def := `form[aria-label="Define a collection"] `
	setValue := func(sel, v string) {
		t.Helper()
		b.eval(`(() => { const el = document.querySelector(` + jsString(sel) + `); el.value = ` + jsString(v) + `; el.dispatchEvent(new Event("change")); return ""; })()`)
	}
	b.typeIn(def+`[data-field="name"] input`, "Leads")
	b.typeIn(def+`[data-field="columns[0].name"] input`, "email")
	b.click(def + `[data-field="columns[0].unique"] input`)
	b.clickText(def, "Columns", "Add a column")
	b.typeIn(def+`[data-field="columns[1].name"] input`, "stage")
	setValue(def+`[data-field="columns[1].type"] select`, "enum")
	b.typeIn(def+`[data-field="columns[1].values"] input`, "open, won, lost")
	b.clickText(def, "Columns", "Define collection")
	b.waitText(def+`[data-field="name"] .field-error`, "must start with a lower-case letter")

	b.eval(`(() => { const el = document.querySelector(` + jsString(def+`[data-field="name"] input`) + `); el.value = ""; return ""; })()`)
	b.typeIn(def+`[data-field="name"] input`, "leads")
	b.clickText(def, "Columns", "Define collection")
	b.waitText(`details[data-collection="leads"] summary`, "stage: enum")

	b.click(`details[data-collection="leads"] summary`)
	grant := `form[aria-label="Grant leads"] `
	b.waitText(grant+`[data-field="subject"]`, "Agent Scout (Sales)")
	setValue(grant+`[data-field="subject"] select`, "agent:"+agent)
	setValue(grant+`[data-field="access"] select`, "write")
	b.clickText(grant, "Access", "Grant")
	b.waitText(`section[aria-label="Grants of leads"] li`, "Agent Scout (Sales) reads and writes its records")

	alter := `form[aria-label="Change leads"] `
	b.clickText(alter, "Columns", "Add a column")
	b.typeIn(alter+`[data-field="columns[2].name"] input`, "notes")
	b.clickText(alter, "Columns", "Save changes")
	b.waitText(`details[data-collection="leads"] summary`, "notes: text")
	b.screenshot("collections.png")

	var cols []struct {
		ID      string
		Name    string
		Columns []struct {
			Name, Type string
			Unique     bool
			Values     []string
		}
	}
	e.Do("", "GET", "/api/orgs/"+org+"/collections", nil).JSON(&cols)
	if len(cols) != 1 || len(cols[0].Columns) != 3 || !cols[0].Columns[0].Unique || len(cols[0].Columns[1].Values) != 3 {
		t.Fatalf("the API keeps %+v", cols)
	}
	var grants []struct {
		AgentID *string `json:"agent_id"`
		Access  string
	}
	e.Do("", "GET", "/api/collections/"+cols[0].ID+"/grants", nil).JSON(&grants)
	if len(grants) != 1 || grants[0].AgentID == nil || *grants[0].AgentID != agent || grants[0].Access != "write" {
		t.Errorf("grants kept: %+v", grants)
	}
}

package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/workerhealth"
)

// TestToolsViewFiltersInChromium: the Tools view searches by server and tool
// name, narrows to what is on, folds the servers the box has not set up,
// says what a switch did by the tool's name with focus kept on the switch,
// and an agent's view opens with what a run of it would be offered.
func TestToolsViewFiltersInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	e := apitest.New(t, apitest.Options{Tweak: localMode(t)})
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Local"}).Map()["id"].(string)
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "G"}).Map()["id"].(string)
	agent := e.Do("", "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scout"}).Map()["id"].(string)
	for _, row := range []map[string]any{
		{"slug": "alpha", "name": "Alpha Weather", "auth": "none"},
		{"slug": "beta", "name": "Beta Maps", "auth": "none"},
		{"slug": "gamma", "name": "Gamma Mail", "auth": "oauth"}, // no OAuth client: not set up
	} {
		row["transport"], row["published"], row["url"] = "http", true, "https://example.com/mcp"
		if r := e.Do("", "POST", "/api/admin/mcp/servers", row); r.Status != 201 {
			t.Fatalf("add %s: %d %s", row["slug"], r.Status, r.Body)
		}
	}

	b := newAppBrowser(t, chromium, e.HTTP.URL)
	b.open("/orgs/" + org + "?tab=tools")
	b.waitText("#tools-view", "Alpha Weather")
	b.waitText("#tools-view details.not-set-up > summary", "1 server not set up on this box")
	if got := b.eval(`String(document.querySelector("details.not-set-up").open)`); got != "false" {
		t.Error("the servers not set up are not folded")
	}
	visible := `[...document.querySelectorAll("li.server")].filter((c) => !c.hidden).map((c) => c.querySelector("h3").textContent).join(",")`

	b.typeIn("#tools-search", "beta")
	b.waitText("#tools-count", "1 of 3 servers shown")
	if got := b.eval(visible); got != "Beta Maps" {
		t.Errorf("searching beta shows %q", got)
	}
	b.eval(`(() => { const s = document.getElementById("tools-search"); s.value = "gamma"; s.dispatchEvent(new Event("input")); return ""; })()`)
	b.waitText("#tools-count", "1 of 3 servers shown")
	if got := b.eval(`String(document.querySelector("details.not-set-up").open)`); got != "true" {
		t.Error("a search that finds a server not set up leaves it folded")
	}
	b.eval(`(() => { const s = document.getElementById("tools-search"); s.value = ""; s.dispatchEvent(new Event("input")); return ""; })()`)

	// Turning a native tool off says so by its name and keeps focus on its switch.
	tool := b.eval(`document.querySelector("table.native tbody tr .switch3")?.closest("tr").dataset.tool || ""`)
	if tool == "" {
		t.Fatal("no native tool has a switch")
	}
	b.eval(`(() => { const i = document.querySelector('tr[data-tool="` + tool + `"] input[value="off"]'); i.focus(); i.click(); return ""; })()`)
	b.waitText("#status", tool+" is off at this organisation")
	b.waitText(`tr[data-tool="`+tool+`"]`, "decided by the organisation")
	if got := b.eval(`document.activeElement?.dataset?.key || ""`); got != "native:"+tool+":off" {
		t.Errorf("after the switch focus is on %q, want the switch", got)
	}
	b.click("#tools-on")
	b.waitText("#tools-count", "servers shown")
	if got := b.eval(`String(document.querySelector('tr[data-tool="` + tool + `"]').hidden)`); got != "true" {
		t.Errorf("On only still shows %s, which is off", tool)
	}
	if page := b.eval(`document.body.innerText`); strings.Contains(page, org) {
		t.Error("the page names the organisation by its id")
	}

	// Code tools: no worker has reported, then one whose engine is down, then one whose engine answers.
	b.waitText("#engine-down", "Code tools are unavailable: no worker is running.")
	b.waitText(`tr[data-tool="code_run"], table.native`, "unavailable: no worker is running")
	report := func(ok bool, why string) {
		t.Helper()
		if err := workerhealth.Write(context.Background(), e.DB, workerhealth.Report{WorkerID: "w1", Driver: "docker", EngineOK: ok, EngineError: why}); err != nil {
			t.Fatal(err)
		}
	}
	report(false, "dial unix /run/podman.sock: connection refused")
	b.open("/orgs/" + org + "?tab=tools")
	b.waitText("#engine-down", "the sandbox engine is down")
	b.waitText("#engine-down", "DOCKER_HOST")
	if page := b.eval(`document.body.innerText`); strings.Contains(page, "podman.sock") {
		t.Error("the engine's own error, with the worker's socket path, reached the page")
	}
	report(true, "")
	b.open("/orgs/" + org + "?tab=tools")
	b.waitText("#tools-view", "Native tools")
	if got := b.eval(`String(!!document.getElementById("engine-down"))`); got != "false" {
		t.Error("code tools read unavailable with a working engine reported")
	}

	b.open("/agents/" + agent + "?tab=tools")
	b.waitText(".offer-preview h2", "What this agent gets")
	b.waitText(".offer-preview", "A direct run is offered")
	b.screenshot("agent-tools-offer.png")
}

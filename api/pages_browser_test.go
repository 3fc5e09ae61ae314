package api_test

import (
	"context"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/runs"
)

// TestNotesChatAndMembersInChromium: a note shows as rendered Markdown with
// no markup of its own and is edited from the page; the group chat starts
// empty, offers its agents to mention and shows an agent's reply as it
// is posted, linked to its run; Members adds a user of the box.
func TestNotesChatAndMembersInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	ctx := context.Background()
	e := apitest.New(t, apitest.Options{Tweak: localMode(t)})
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Local"}).Map()["id"].(string)
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Sales"}).Map()["id"].(string)
	agent := e.Do("", "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scout"}).Map()["id"].(string)
	note := "# Plan\n- **call** Acme <script>window.owned = 1</script>\n- [docs](https://example.com) and [bad](javascript:window.owned=1)"
	if r := e.Do("", "PUT", "/api/guilds/"+guild+"/notes/plan.md", map[string]any{"content": note}); r.Status >= 300 {
		t.Fatalf("put note: %d %s", r.Status, r.Body)
	}
	if r := e.Do("", "POST", "/api/users", map[string]any{"name": "Ada", "email": "ada@example.com"}); r.Status != 201 {
		t.Fatalf("add user: %d %s", r.Status, r.Body)
	}

	b := newAppBrowser(t, chromium, e.HTTP.URL)
	b.open("/guilds/" + guild + "?tab=notes")
	b.waitText("li.note", "plan.md")
	b.click(`li[data-note="plan.md"] summary`)
	b.waitText(`li[data-note="plan.md"] .md h3`, "Plan")
	b.waitText(`li[data-note="plan.md"] .md li strong`, "call")
	b.waitText(`li[data-note="plan.md"] .md a[href="https://example.com"]`, "docs")
	if got := b.eval(`String(document.querySelectorAll(".md script, .md a[href^='javascript']").length) + String(window.owned ?? "")`); got != "0" {
		t.Errorf("the note's markup reached the page (%s)", got)
	}
	b.waitText(`li[data-note="plan.md"] .md`, "<script>")
	b.clickText(`li[data-note="plan.md"]`, "Plan", "Edit plan.md")
	b.eval(`(() => { const c = document.querySelector('form[aria-label="Write a note"] textarea'); c.value = "## Done\nAll *called*."; return ""; })()`)
	b.clickText(`form[aria-label="Write a note"]`, "Content", "Save note")
	b.waitText("#status", "Note plan.md saved")
	b.click(`li[data-note="plan.md"] summary`)
	b.waitText(`li[data-note="plan.md"] .md h4`, "Done")
	b.waitText(`li[data-note="plan.md"] .md em`, "called")

	b.open("/guilds/" + guild + "?tab=chat")
	b.waitText("#chat-empty", "No message yet")
	b.clickText(".mentions", "Mention", "@Scout")
	if got := b.eval(`document.querySelector('form[aria-label="Post to the guild"] textarea').value`); got != "@Scout " {
		t.Errorf("the mention button wrote %q", got)
	}
	run, err := runs.Create(ctx, e.DB, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "group", Budget: 5, Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := e.DB.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := groupchat.Post(ctx, tx, groupchat.NewMessage{GuildID: guild, Author: groupchat.Author{Kind: "agent", AgentID: agent},
		Content: "Acme is called.", RunID: run.ID}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	b.waitText("#chat li", "Scout: Acme is called.")
	b.waitText(`#chat li a[href="/runs/`+run.ID+`"]`, "its run")
	if got := b.eval(`String(document.getElementById("chat-empty").hidden)`); got != "true" {
		t.Error("the empty state stays beside a message")
	}
	b.screenshot("group-chat.png")

	b.open("/orgs/" + org + "?tab=members")
	b.waitText(`form[aria-label="Add an operator"] select`, "Ada (ada@example.com)")
	b.eval(`(() => { const s = document.querySelector('form[aria-label="Add an operator"] select');
  s.value = [...s.options].find((o) => o.textContent.startsWith("Ada")).value; return ""; })()`)
	b.clickText(`form[aria-label="Add an operator"]`, "User", "Add operator")
	b.waitText("#members", "Ada")
	b.waitText("#status", "Ada is an operator of Local")
}

package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/inputs"
)

// TestServerFormsInTheInboxInChromium: the approvals page shows a server's
// form with fields built from its schema and a URL request as a link; the
// operator fills the form and sends it, and the answer is stored as typed
// (a number as a number), ready for the waiting call.
func TestServerFormsInTheInboxInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	var local string
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) {
		u, err := access.LocalUser(context.Background(), d.DB)
		if err != nil {
			t.Fatal(err)
		}
		d.AuthMode, d.LocalUserID, local = "local", u.ID, u.ID
	}})
	ctx := context.Background()
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Local"}).Map()["id"].(string)
	// An answer is the organisation's operators' (not an instance admin's).
	if err := access.AddMember(ctx, e.DB, local, org, access.RoleOperator); err != nil {
		t.Fatal(err)
	}
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "G"}).Map()["id"].(string)
	agent := e.Do("", "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Buyer"}).Map()["id"].(string)
	var runID string
	if err := e.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 5, 5) RETURNING id`, agent, guild, org).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	at := inputs.Request{RunID: runID, Seq: 1, OrganisationID: org, GuildID: guild, AgentID: agent, Tool: "shop_order",
		Server: "shop", ExpiresAt: time.Now().Add(time.Hour)}
	form, err := inputs.Ask(ctx, e.DB, at, inputs.Form{Mode: inputs.ModeForm, Message: "How many copies?", Schema: json.RawMessage(`{
		"type":"object","required":["copies"],"properties":{
		"copies":{"type":"integer","title":"Copies","minimum":1,"maximum":10},
		"speed":{"type":"string","enum":["slow","fast"]},
		"gift":{"type":"boolean"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	at.Seq = 2
	link, err := inputs.Ask(ctx, e.DB, at, inputs.Form{Mode: inputs.ModeURL, Message: "Sign in to the shop", URL: "https://shop.example/login"})
	if err != nil {
		t.Fatal(err)
	}

	bctx := newAppBrowser(t, chromium, e.HTTP.URL, chromedp.WindowSize(390, 844)).ctx
	c, stop := context.WithTimeout(bctx, 60*time.Second) // a failure bound
	defer stop()
	card := `article[data-input="` + form.ID + `"]`
	css := func(sel string) chromedp.CSS { return chromedp.CSS(card + " " + sel) }
	if err := chromedp.Do(c,
		chromedp.Navigate(e.HTTP.URL+"/orgs/"+org+"?tab=approvals"),
		chromedp.WaitVisible(css(`input[name="copies"]`)),
	); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(c, chromedp.TextContent(css(`label`)))
	if err != nil {
		t.Fatal(err)
	}
	href, err := chromedp.Run(c, chromedp.AttributeValue(chromedp.CSS(`article[data-input="`+link.ID+`"] a[target="_blank"]`), "href"))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(c,
		chromedp.SetValue(css(`input[name="copies"]`), "3"),
		chromedp.SetValue(css(`select[name="speed"]`), "1"),
		chromedp.Click(css(`input[name="gift"]`)),
	); err != nil {
		t.Fatal(err)
	}
	// Send, and read what the page says once it says it (the status line
	// changes when the answer's request returns).
	said, err := chromedp.Run(c, chromedp.Evaluate[string](`new Promise((done) => {
		const el = document.getElementById("status");
		new MutationObserver(() => { if (el.textContent) done(el.textContent); }).observe(el, { childList: true, characterData: true, subtree: true });
		document.querySelector('`+card+` button[type="submit"]').click();
	})`, chromedp.EvalAwaitPromise))
	if err != nil || said != "Sent to the server" {
		t.Fatalf("the page said %q (%v)", said, err)
	}
	if href.Value != "https://shop.example/login" || title != "Copies *" {
		t.Fatalf("link %q, first label %q", href.Value, title)
	}
	got, err := inputs.Get(ctx, e.DB, form.ID, nil)
	if err != nil || got.State != inputs.StateAccepted {
		t.Fatalf("request = %s, %v", got.State, err)
	}
	content, err := inputs.Take(ctx, e.DB, form.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(content); string(b) != `{"copies":3,"gift":true,"speed":"fast"}` {
		t.Fatalf("content = %s", b)
	}
}

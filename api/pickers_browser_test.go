package api_test

import (
	"context"
	"net/url"
	"strconv"
	"testing"

	"github.com/guilds/guilds/internal/githubapp"
)

// The coin picker, as an operator meets it twice: in Pinned prices'
// Connect (searching with the key typed so far) and in the Coins dialog
// of the connected login (searching with its stored key); what was chosen
// is what the API keeps.
func TestPinnedPricesCoinPickerInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	me := newMCPEnvDeps(t, false, nil, nil, localMode(t))
	usePinnedGecko(t, me)
	org := me.Do("", "POST", "/api/orgs", map[string]any{"name": "Coins"}).Map()["id"].(string)

	b := newAppBrowser(t, chromium, me.HTTP.URL)
	b.open("/orgs/" + org + "?tab=tools")
	b.click(`#server-pinned_prices button.connect`)
	b.typeIn(`dialog input[name="key"]`, pinnedKey)
	b.typeIn(`dialog input[name="coin_query"]`, "bitcoin")
	b.clickText(`dialog fieldset.picker`, "Search coins", "Search")
	b.clickText(`dialog ul.coin-results li`, "Wrapped Bitcoin (WBTC)", "Wrapped Bitcoin (WBTC)")
	b.clickText(`dialog ul.coin-results li`, "Bitcoin (BTC)", "Bitcoin (BTC)")
	b.waitText(`dialog ul.coins`, "Bitcoin (BTC)")
	b.click(`dialog [aria-label="Remove Wrapped Bitcoin"]`)
	b.click(`dialog form button[type="submit"]`)
	b.waitText(`#server-pinned_prices`, "Coins")

	var id string
	if err := me.DB.QueryRow(context.Background(), `SELECT id FROM mcp_connections`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	coins := func() string {
		t.Helper()
		r := me.Do("", "GET", "/api/mcp/connections/"+id+"/pinned-prices", nil)
		if r.Status != 200 {
			t.Fatalf("coins: %d %s", r.Status, r.Body)
		}
		return coinIDs(t, r.Body)
	}
	if got := coins(); got != "bitcoin" {
		t.Fatalf("after Connect the login pins %q, want bitcoin", got)
	}

	// The Coins dialog shows the pinned coin and searches with the stored
	// key; a coin CoinGecko does not quote is refused with its reason.
	b.click(`#server-pinned_prices button.coins`)
	b.waitText(`dialog ul.coins`, "Bitcoin (BTC)")
	b.typeIn(`dialog input[name="coin_query"]`, "wrapped")
	b.clickText(`dialog fieldset.picker`, "Search coins", "Search")
	b.clickText(`dialog ul.coin-results li`, "Wrapped Bitcoin (WBTC)", "Wrapped Bitcoin (WBTC)")
	b.clickText(`dialog .actions`, "Save coins", "Save coins")
	b.waitText(`dialog fieldset.picker > .field-error`, "wrapped-bitcoin is not quoted")
	if got := coins(); got != "bitcoin" {
		t.Fatalf("a refused save changed the coins to %q", got)
	}
	b.click(`dialog [aria-label="Remove Wrapped Bitcoin"]`)
	b.eval(`(document.querySelector('dialog input[name="coin_query"]').value = "", "")`)
	b.typeIn(`dialog input[name="coin_query"]`, "ether")
	b.clickText(`dialog fieldset.picker`, "Search coins", "Search")
	b.clickText(`dialog ul.coin-results li`, "Ethereum (ETH)", "Ethereum (ETH)")
	b.waitText(`dialog ul.coins`, "Ethereum (ETH)")
	b.clickText(`dialog .actions`, "Save coins", "Save coins")
	b.waitText(`#status`, "Coins saved")
	if got := coins(); got != "bitcoin,ethereum" {
		t.Fatalf("after Save coins the login pins %q, want bitcoin,ethereum", got)
	}
}

// The Drive folder picker of a login waiting for its folder: the operator
// browses the three places, opens a folder, uses a subfolder; the login is
// connected and confined to it.
func TestDriveFolderPickerInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	me, _, _ := newDriveEnv(t, localMode(t))
	org := me.Do("", "POST", "/api/orgs", map[string]any{"name": "Docs"}).Map()["id"].(string)
	r := me.doIn(t, me.browser, "", "POST", "/api/mcp/connect", `{"slug":"drive","owner_scope":"organisation","owner_id":"`+org+`"}`)
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)
	if r := me.callback(t, follow(t, r.Map()["authorization_url"].(string))); r.Status != 200 {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}

	b := newAppBrowser(t, chromium, me.HTTP.URL)
	b.open("/orgs/" + org + "?tab=tools")
	b.click(`#server-drive button.folder`)
	b.waitText(`dialog ul.rows`, "Project X")
	b.clickText(`dialog .actions`, "Shared drives", "Shared drives")
	b.waitText(`dialog ul.rows`, "Finance drive")
	b.clickText(`dialog .actions`, "Shared with me", "Shared with me")
	b.waitText(`dialog ul.rows`, "Shared folder")
	b.clickText(`dialog .actions`, "My Drive", "My Drive")
	b.clickText(`dialog ul.rows li`, "Project X", "Open")
	b.clickText(`dialog ul.rows li`, "drafts", "Use this folder")
	b.waitText(`#status`, "confined to drafts")

	r = me.Do("", "GET", "/api/mcp/connections/"+id, nil)
	if m := r.Map(); r.Status != 200 || m["status"] != "connected" || m["account_hint"] != "drafts" {
		t.Fatalf("after the choice the login is %d %s, want connected to drafts", r.Status, r.Body)
	}
}

// The GitHub repository dialog of a guild's connected login: the operator
// ticks one of the repositories the installation reaches and saves; the
// guild works on that one, and the dialog opened again shows it ticked.
func TestGitHubRepositoryDialogInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	e := newGitHubEnv(t, true, localMode(t))
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Acme"}).Map()["id"].(string)
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"}).Map()["id"].(string)
	inst := e.gh.AddInstallation("acme-gh")
	e.gh.AddRepo(t, inst, "acme-gh", "api")
	web := e.gh.AddRepo(t, inst, "acme-gh", "web")
	e.gh.AddUser("octo", inst)

	r := e.doIn(t, e.browser, "", "POST", "/api/mcp/connect", `{"slug":"github","owner_scope":"guild","owner_id":"`+guild+`"}`)
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	u, err := url.Parse(r.Map()["authorization_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"code": {e.gh.Code("octo")}, "installation_id": {strconv.FormatInt(inst, 10)}, "setup_action": {"install"}, "state": {u.Query().Get("state")}}
	if r := e.callback(t, callbackPath(q)); r.Status != 200 {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}

	b := newAppBrowser(t, chromium, e.HTTP.URL)
	b.open("/guilds/" + guild + "?tab=tools")
	b.click(`#server-github button.repos`)
	b.waitText(`dialog fieldset`, "acme-gh/web")
	save := func() {
		t.Helper()
		b.eval(`(document.getElementById("status").textContent = "", "")`) // the last save's message is not this one's
		b.eval(`(document.getElementById("server-github").dataset.stale = "1", "")`)
		b.clickText(`dialog .actions`, "Save repositories", "Save repositories")
		b.waitText(`#status`, "Repositories saved")
		b.waitText(`#server-github:not([data-stale])`, "") // the view shows the saved choice
	}
	save() // nothing ticked yet
	b.click(`#server-github button.repos`)
	b.waitText(`dialog fieldset`, "acme-gh/web")
	b.eval(`([...document.querySelectorAll("dialog .field.check")].find((f) => f.textContent.includes("acme-gh/web")).querySelector("label").click(), "")`)
	save()

	var gr struct {
		Repositories []githubapp.GuildRepository `json:"repositories"`
	}
	r = e.Do("", "GET", "/api/guilds/"+guild+"/repositories", nil)
	r.JSON(&gr)
	if r.Status != 200 || len(gr.Repositories) != 1 || gr.Repositories[0].GitHubID != web {
		t.Fatalf("after the save the guild's repositories are %d %s, want acme-gh/web", r.Status, r.Body)
	}

	// Opened again, the dialog shows the saved choice.
	b.click(`#server-github button.repos`)
	b.waitText(`dialog fieldset`, "acme-gh/web")
	if got := b.eval(`[...document.querySelectorAll("dialog .field.check")].filter((f) => f.querySelector("input").checked).map((f) => f.textContent).join(",")`); got != "acme-gh/web (private)" {
		t.Fatalf("the dialog opened again ticks %q, want acme-gh/web", got)
	}
}

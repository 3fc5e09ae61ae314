package api_test

import (
	"testing"

	"github.com/guilds/guilds/api"
)

// TestGitHubConnectInChromium drives GitHub's three browser returns that
// the Go client alone cannot meet, from Connect on the Tools view to a
// connected login: an installation only requested from the organisation's
// owners, a setup redirect without a code (on to user authorization), and
// a user who reaches several installations (the app's picker page).
func TestGitHubConnectInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	e := newGitHubEnv(t, true, localMode(t))
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Acme"}).Map()["id"].(string)
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"}).Map()["id"].(string)
	acme := e.gh.AddInstallation("acme-gh")
	beta := e.gh.AddInstallation("beta-gh")
	e.gh.AddUser("octo", acme, beta)
	e.gh.BrowserUser = "octo"
	e.gh.CallbackURL = e.HTTP.URL + api.CallbackPath

	b := newAppBrowser(t, chromium, e.HTTP.URL)
	connect := func(scope, id string) {
		t.Helper()
		b.open("/" + scope + "/" + id + "?tab=tools")
		b.eval(`(window.open = () => null, "")`)
		b.click(`#server-github button.connect`)
		b.click(`dialog form button[type="submit"]`)
		b.waitText(`dialog a.authorize`, "")
		b.openURL(b.eval(`document.querySelector("dialog a.authorize").href`))
	}

	// Only an owner may install on the organisation: the request is sent,
	// and the page says it waits for them, not that the login failed.
	e.gh.OnlyRequest = true
	connect("orgs", org)
	b.waitText("h1", "Request sent")
	b.waitText("#landing-result", "owner")

	// The owner installed it; GitHub's setup redirect carries no code: the
	// callback sends the browser on to user authorization, which connects.
	e.gh.OnlyRequest, e.gh.InstallWithoutCode, e.gh.Installing = false, true, acme
	connect("orgs", org)
	b.waitText("#landing-result", "connected as acme-gh")
	b.noSecretInPage()

	// The organisation has a login, so the guild's Connect is user
	// authorization; the user reaches two installations: the picker page.
	connect("guilds", guild)
	b.waitText("h1", "Choose")
	b.waitText("#github-accounts", "beta-gh")
	b.click(`#github-accounts button[data-account="beta-gh"]`)
	b.waitText("#landing-result", "connected as beta-gh")
	b.noSecretInPage()

	if n := e.Count("github_logins"); n != 2 {
		t.Errorf("%d GitHub logins kept, want the organisation's and the guild's", n)
	}
}

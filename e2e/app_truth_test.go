package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestAppSaysWhatIsTrue drives the pages issue 34 found telling the operator
// something false, on a box with no model key of its own: the banner goes
// once the organisation holds a key, a provider picked with no model keeps
// the provider's default, Admin → Users lists and adds operators, and a
// collection is defined from the app.
func TestAppSaysWhatIsTrue(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform and a browser")
	}
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (apt-get install chromium)")
		}
		t.Skip("no Chromium at /usr/bin/chromium")
	}
	d := deploy(t, nil)
	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scribe"})["id"].(string)

	b := newBrowser(t, chromium, d.API, t.TempDir())
	b.open("/")
	b.fill(`input[name="token"]`, d.Token)
	b.submit(`form[aria-label="Sign in"]`)
	b.waitText("h1", "Organisations")

	// No key anywhere: the banner says so. A key set on the organisation's
	// tab takes it away at once, and it stays away on the next page.
	b.waitText("#no-model-key", "No model key")
	b.open("/orgs/" + org + "?tab=models")
	b.fill(`form[aria-label="Set a model key"] input[name="key"]`, "sk-or-organisation-key-0123456789")
	b.submit(`form[aria-label="Set a model key"]`)
	b.waitText("#status", "Key saved")
	b.waitGone("#no-model-key")
	b.click(`nav a[href="/"]`)
	b.waitText("h1", "Organisations")
	if b.eval(`String(!!document.querySelector("#no-model-key"))`) != "false" {
		t.Error("the no-model-key banner came back after a key was set")
	}

	// A provider with the model left empty is the provider's default model.
	b.open("/agents/" + agent)
	b.waitVisible(`form[aria-label="Agent settings"] select[name="provider"]`)
	b.eval(`(() => { const s = document.querySelector('form[aria-label="Agent settings"] select[name="provider"]'); s.value = "openrouter"; return ""; })()`)
	b.eval(`(document.querySelector('form[aria-label="Agent settings"] input[name="model"]').value = "", "")`)
	b.submit(`form[aria-label="Agent settings"]`)
	b.waitText("#status", "Agent saved")
	if m := d.must(200, "GET", "/api/agents/"+agent, nil)["model"]; m != "openrouter" {
		t.Errorf("agent model stored as %q, want the provider alone", m)
	}
	b.open("/agents/" + agent)
	b.waitVisible(`form[aria-label="Agent settings"]`)
	if got := b.eval(`document.querySelector('form[aria-label="Agent settings"] select[name="provider"]').value + "|" + document.querySelector('form[aria-label="Agent settings"] input[name="model"]').value`); got != "openrouter|" {
		t.Errorf("the settings read back provider|model = %q, want openrouter|", got)
	}

	// Admin → Users: everyone listed; a new operator's token shown once;
	// disabling asks first.
	b.open("/admin?tab=users")
	b.waitText("#users", "you")
	b.waitVisible(`form[aria-label="Add an operator"] select[name="organisation_id"]`)
	b.fill(`form[aria-label="Add an operator"] input[name="name"]`, "beta-op")
	b.eval(`(() => { const s = document.querySelector('form[aria-label="Add an operator"] select[name="organisation_id"]'); s.value = s.options[1].value; return ""; })()`)
	b.submit(`form[aria-label="Add an operator"]`)
	b.waitText("#user-token", "shown once")
	if tok := b.eval(`document.querySelector("#user-token code").textContent`); !strings.HasPrefix(tok, "gld_") {
		t.Errorf("the new operator's token reads %q", tok)
	}
	b.waitText("#users", "Acme")
	b.eval(`(window.confirm = () => true, "")`)
	b.click(`#users button.danger`)
	b.waitText("#users", "disabled")
	b.checkLabels("Users")

	// Collections: defined from the app, with a bad column refused in words.
	b.open("/orgs/" + org + "?tab=collections")
	b.waitText("#collections", "No collection yet")
	def := `form[aria-label="Define a collection"] `
	b.fill(def+`[data-field="name"] input`, "Leads")
	b.fill(def+`[data-field="columns[0].name"] input`, "email")
	b.submit(`form[aria-label="Define a collection"]`)
	b.waitText(def+`[data-field="name"] .field-error`, "lower-case letter")
	b.fill(def+`[data-field="name"] input`, "leads")
	b.submit(`form[aria-label="Define a collection"]`)
	b.waitText("#collections", "email: text")
	b.checkLabels("Collections")

	// A destructive action asks first: refused, the key stays; confirmed,
	// it goes, and with it the last key, so the banner comes back.
	b.open("/orgs/" + org + "?tab=models")
	b.waitText("table", "Set on this organisation")
	b.eval(`(window.confirm = () => false, "")`)
	b.click(`table button.danger`)
	if r := d.Call("GET", "/api/orgs/"+org+"/model-keys", nil); !strings.Contains(string(r.Body), `"set":true`) {
		t.Fatalf("the key went although the operator said no: %s", r.Body)
	}
	b.eval(`(window.confirm = () => true, "")`)
	b.click(`table button.danger`)
	b.waitText("#status", "Key removed")
	b.waitText("#no-model-key", "No model key")
}

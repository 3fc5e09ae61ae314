package models_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

func keyring(t *testing.T) *secret.Keyring {
	t.Helper()
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func box(vars map[string]string) *integrations.Registry {
	return integrations.New(func(k string) string { return vars[k] })
}

func newOrg(t *testing.T, db store.DB, slug string) string {
	t.Helper()
	var id string
	if err := db.QueryRow(context.Background(), `INSERT INTO organisations (name, slug) VALUES ($1, $1) RETURNING id`, slug).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// Which key a call uses: the organisation's own key wins over the box's, a
// bare model goes to the first provider with a key, and a provider nobody
// holds a key for is "no key yet".
func TestResolveKeyPrecedence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	kr := keyring(t)
	acme, other := newOrg(t, db, "acme"), newOrg(t, db, "other")
	r := &models.Resolver{Integrations: box(map[string]string{"OPENROUTER_API_KEY": "box-or-key"}), Keyring: kr}

	tg, err := r.Resolve(ctx, db, acme, "openrouter/anthropic/claude")
	if err != nil || tg.Key != "box-or-key" || tg.KeySource != "box" || tg.Model != "anthropic/claude" || tg.Qualified() != "openrouter/anthropic/claude" {
		t.Fatalf("box key: %+v %v", tg.LogValue(), err)
	}
	if err := models.SetOrgKey(ctx, db, kr, acme, models.OpenRouter, "  org-or-key  "); err != nil {
		t.Fatal(err)
	}
	if tg, err = r.Resolve(ctx, db, acme, "openrouter/anthropic/claude"); err != nil || tg.Key != "org-or-key" || tg.KeySource != "organisation" {
		t.Fatalf("organisation key does not win: %+v %v", tg.LogValue(), err)
	}
	if tg, err = r.Resolve(ctx, db, other, "openrouter/x"); err != nil || tg.Key != "box-or-key" {
		t.Fatalf("another organisation uses acme's key: %+v %v", tg.LogValue(), err)
	}

	// DeepInfra: nobody holds a key.
	_, err = r.Resolve(ctx, db, other, "deepinfra/meta-llama/x")
	var nk *models.NoKeyError
	if !errors.As(err, &nk) || !errors.Is(err, models.ErrNoKey) || nk.Provider != models.DeepInfra || !strings.Contains(err.Error(), "no key yet") {
		t.Fatalf("deepinfra without keys: %v", err)
	}
	// A bare model goes to the first provider that has a key, with its default model when empty.
	if tg, err = r.Resolve(ctx, db, other, ""); err != nil || tg.Provider != models.OpenRouter || tg.Model == "" {
		t.Fatalf("bare model: %+v %v", tg.LogValue(), err)
	}
	if err := models.SetOrgKey(ctx, db, kr, other, models.DeepInfra, "org-di-key"); err != nil {
		t.Fatal(err)
	}
	if tg, err = r.Resolve(ctx, db, other, "deepinfra/meta-llama/x"); err != nil || tg.Key != "org-di-key" || tg.Provider != models.DeepInfra {
		t.Fatalf("deepinfra with the organisation's key: %+v %v", tg.LogValue(), err)
	}

	st, err := r.Providers(ctx, db, acme)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || !st[0].OrgKey || !st[0].BoxKey || st[1].HasKey || st[1].Label != "no key yet" {
		t.Fatalf("providers = %+v", st)
	}

	// No key anywhere.
	none := &models.Resolver{Integrations: box(nil), Keyring: kr}
	// acme holds an OpenRouter key of its own, so a bare model still resolves.
	if tg, err := none.Resolve(ctx, db, acme, "gpt"); err != nil || tg.KeySource != "organisation" || tg.Model != "gpt" {
		t.Fatalf("acme's own key should serve a bare model: %+v %v", tg.LogValue(), err)
	}
	if _, err := none.Resolve(ctx, db, newOrg(t, db, "bare"), "gpt"); !errors.Is(err, models.ErrNoKey) {
		t.Fatalf("no key anywhere: %v", err)
	}
}

// A key stored for one organisation does not open as another's.
func TestOrgKeyIsBoundToItsOrganisation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	kr := keyring(t)
	a, b := newOrg(t, db, "a"), newOrg(t, db, "b")
	if err := models.SetOrgKey(ctx, db, kr, a, models.OpenRouter, "sk-a-key-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO organisation_model_keys (organisation_id, provider, key_id, ciphertext)
		SELECT $1, provider, key_id, ciphertext FROM organisation_model_keys WHERE organisation_id = $2`, b, a); err != nil {
		t.Fatal(err)
	}
	if k, err := models.OrgKey(ctx, db, kr, b, models.OpenRouter); err == nil {
		t.Fatalf("a copied ciphertext opened as %q", k)
	}
	if err := models.SetOrgKey(ctx, db, nil, a, models.OpenRouter, "sk-x-key-1"); !errors.Is(err, models.ErrNoKeyring) {
		t.Fatalf("no keyring: %v", err)
	}
}

// The wire: the request carries the key and the bare model name; provider
// failures are sorted into retryable or not, and the key never shows in an
// error even when the provider echoes it.
func TestComplete(t *testing.T) {
	t.Parallel()
	const key = "sk-or-secret-4242"
	var status int
	var body string
	var gotAuth, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		gotAuth, gotBody = r.Header.Get("Authorization"), string(raw)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	r := &models.Resolver{}
	tg := models.Target{Provider: models.OpenRouter, Model: "test-model", BaseURL: srv.URL, Key: key}
	req := models.Request{Messages: []models.Message{{Role: "user", Content: "hi"}}}

	status, body = 200, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"echo","arguments":"{\"text\":\"x\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`
	resp, err := r.Complete(context.Background(), tg, req)
	if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Function.Arguments != `{"text":"x"}` || resp.Usage.PromptTokens != 3 {
		t.Fatalf("tool call: %+v %v", resp, err)
	}
	if gotAuth != "Bearer "+key || !strings.Contains(gotBody, `"model":"test-model"`) {
		t.Fatalf("request: %q %s", gotAuth, gotBody)
	}

	cases := []struct {
		status    int
		body      string
		retryable bool
		contains  string
	}{
		{429, `{"error":{"message":"slow down"}}`, true, "429: slow down"},
		{503, `upstream down`, true, "503"},
		{400, `{"error":{"message":"bad key ` + key + `"}}`, false, "[key]"},
		{401, `{"detail":"invalid token"}`, false, "invalid token"},
		{200, `{"error":{"message":"upstream failed","code":502}}`, true, "upstream failed"},
		{200, `not json`, true, "not JSON"},
		{200, `{"choices":[]}`, true, "no choice"},
	}
	for _, c := range cases {
		status, body = c.status, c.body
		_, err := r.Complete(context.Background(), tg, req)
		var me *models.Error
		if !errors.As(err, &me) || me.Retryable() != c.retryable || !strings.Contains(err.Error(), c.contains) || strings.Contains(err.Error(), key) {
			t.Errorf("%d %s: %v", c.status, c.body, err)
		}
	}

	srv.Close()
	_, err = r.Complete(context.Background(), tg, req)
	var me *models.Error
	if !errors.As(err, &me) || !me.Retryable() || strings.Contains(err.Error(), key) {
		t.Fatalf("unreachable: %v", err)
	}
}

// A provider that echoes the key in a long error body: the key is scrubbed
// before the message is clipped, so no part of it survives even when it
// straddles the clip point, in an error answer or in a 200 carrying an error.
func TestCompleteScrubsKeyBeforeClipping(t *testing.T) {
	t.Parallel()
	const key = "sk-or-v1-0123456789abcdefSTRADDLE"
	var status int
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	r := &models.Resolver{}
	tg := models.Target{Provider: models.OpenRouter, Model: "m", BaseURL: srv.URL, Key: key}
	req := models.Request{Messages: []models.Message{{Role: "user", Content: "hi"}}}
	for _, at := range []int{290, 295, 299} { // the key starts this many bytes into the message
		msg := strings.Repeat("x", at) + key + strings.Repeat(" tail", 100)
		for _, c := range []struct {
			status int
			body   string
		}{
			{400, `{"error":{"message":"` + msg + `"}}`},
			{401, `{"detail":"` + msg + `"}`},
			{500, msg},
			{200, `{"error":{"message":"` + msg + `","code":502}}`},
		} {
			status, body = c.status, c.body
			_, err := r.Complete(context.Background(), tg, req)
			if err == nil {
				t.Fatalf("%d: no error", c.status)
			}
			if strings.Contains(err.Error(), key[:6]) || !strings.Contains(err.Error(), "xxxx") || len(err.Error()) > 400 {
				t.Errorf("%d, key at %d: %q", c.status, at, err)
			}
		}
	}
}

// A key too short to be redacted from tool results is refused when stored,
// so a stored key is always in a run's redaction set.
func TestSetOrgKeyRefusesAKeyTooShortToRedact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	kr := keyring(t)
	org := newOrg(t, db, "short")
	err := models.SetOrgKey(ctx, db, kr, org, models.OpenRouter, " sk-1234 ")
	if err == nil || !strings.Contains(err.Error(), "at least 8 characters") || strings.Contains(err.Error(), "sk-1234") {
		t.Fatalf("short key: %v", err)
	}
	if held, err := models.OrgKeyProviders(ctx, db, org); err != nil || len(held) != 0 {
		t.Fatalf("a refused key was stored: %v %v", held, err)
	}
	if err := models.SetOrgKey(ctx, db, kr, org, models.OpenRouter, "sk-12345"); err != nil {
		t.Fatalf("an 8-character key: %v", err)
	}
}

// A provider picked with the model left empty means that provider's default
// model, never a model named after the provider (issue 34).
func TestSplitProviderAlone(t *testing.T) {
	for in, want := range map[string][2]string{
		"openrouter":               {"openrouter", ""},
		"openrouter/":              {"openrouter", ""},
		" deepinfra ":              {"deepinfra", ""},
		"openrouter/openai/gpt-4o": {"openrouter", "openai/gpt-4o"},
		"openai/gpt-4o":            {"", "openai/gpt-4o"},
		"claude-sonnet-4-5":        {"", "claude-sonnet-4-5"},
		"":                         {"", ""},
	} {
		if p, m := models.Split(in); p != want[0] || m != want[1] {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", in, p, m, want[0], want[1])
		}
	}
	r := &models.Resolver{Integrations: integrations.New(func(k string) string {
		if k == "OPENROUTER_API_KEY" {
			return "sk-or-box-key-0123456789"
		}
		return ""
	})}
	target, err := r.Resolve(context.Background(), nil, "", "openrouter")
	if err != nil {
		t.Fatal(err)
	}
	if target.Provider != "openrouter" || target.Model == "openrouter" || target.Model == "" {
		t.Errorf("an agent on openrouter with no model resolves to %s/%s, want the provider's default", target.Provider, target.Model)
	}
}

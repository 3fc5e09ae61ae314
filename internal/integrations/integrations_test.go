package integrations

import "testing"

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestStates(t *testing.T) {
	r := New(env(map[string]string{
		"OPENROUTER_API_KEY": "sk-or",
		"GITHUB_APP_ID":      "12",
		"GITHUB_APP_SLUG":    "guilds",
		"TYPESAFE_MODEL":     "small",
	}))
	cases := map[string]State{
		"openrouter": On, "deepinfra": Off, "web-search": Off, "group-routing": Off,
		"github-app": Incomplete, "google-connectors": Off, "error-reporting": Off,
	}
	if got := len(r.All()); got != 7 {
		t.Fatalf("want the 7 integrations, got %d", got)
	}
	for name, want := range cases {
		st, ok := r.Get(name)
		if !ok || st.State != want {
			t.Errorf("%s: state %q, want %q", name, st.State, want)
		}
	}
	gh, _ := r.Get("github-app")
	if len(gh.Missing) != 3 {
		t.Errorf("github-app missing %v", gh.Missing)
	}
	if r.Value("openrouter", "OPENROUTER_API_KEY") != "sk-or" {
		t.Error("value of an integration that is on")
	}
	if r.Value("github-app", "GITHUB_APP_ID") != "" {
		t.Error("an incomplete integration must not hand out its values")
	}
	if r.Value("group-routing", "TYPESAFE_MODEL") != "" {
		t.Error("a tuning variable alone does not switch group-routing on")
	}
	if dep, on, missing := r.ConnectorEnabled("gmail"); dep != "google-connectors" || on || len(missing) != 2 {
		t.Errorf("gmail: %s %v %v", dep, on, missing)
	}
	if _, on, _ := r.ConnectorEnabled("notion"); !on {
		t.Error("notion depends on no integration")
	}
	if got := r.ModelProviders(); len(got) != 1 || got[0] != "openrouter" {
		t.Errorf("model providers %v", got)
	}
}

func TestVariablesNeverCarryValues(t *testing.T) {
	r := New(env(map[string]string{"TAVILY_API_KEY": "tvly-secret"}))
	st, _ := r.Get("web-search")
	if st.State != On || !st.Variables[0].Set || st.Variables[0].Name != "TAVILY_API_KEY" {
		t.Fatalf("%+v", st)
	}
}

func TestSecretsLeaveIdentifiersOut(t *testing.T) {
	r := New(env(map[string]string{
		"OPENROUTER_API_KEY": "sk-or-1234567890", "GITHUB_APP_ID": "12", "GITHUB_APP_SLUG": "guilds",
		"GITHUB_APP_CLIENT_SECRET": "cs-abcdefghij", "SENTRY_DSN": "https://k@sentry.example/1",
	}))
	got := r.Secrets()
	want := map[string]bool{"sk-or-1234567890": true, "cs-abcdefghij": true, "https://k@sentry.example/1": true}
	if len(got) != len(want) {
		t.Fatalf("secrets %v", got)
	}
	for _, v := range got {
		if !want[v] {
			t.Errorf("unexpected secret %q", v)
		}
	}
}

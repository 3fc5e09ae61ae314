package configured_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connectors/providers/configured"
)

const acme = `{"provider":"config","command":"acme-mcp","fields":[
	{"name":"workspace","label":"Workspace id","header":"X-Workspace"},
	{"name":"api_base","env":"ACME_API_BASE","secret":false},
	{"name":"region","header":"x-region","env":"ACME_REGION","optional":true}]}`

func configure(t *testing.T, cfg string) (connectors.ConfigProvider, error) {
	t.Helper()
	p, ok := connectors.Lookup(configured.ID)
	if !ok {
		t.Fatal("the config provider is not registered")
	}
	c, ok := p.(connectors.Configurer)
	if !ok {
		t.Fatal("the config provider is not a Configurer")
	}
	got, err := c.Configure(connectors.ProviderConfig{Server: "acme", Config: []byte(cfg)})
	if err != nil {
		return nil, err
	}
	return got.(connectors.ConfigProvider), nil
}

func TestFieldsAreTheForm(t *testing.T) {
	p, err := configure(t, acme)
	if err != nil {
		t.Fatal(err)
	}
	if _, isKey := p.(connectors.KeyProvider); isKey {
		t.Fatal("a config provider must not look like a key provider")
	}
	want := []connectors.KeyField{
		{Name: "workspace", Label: "Workspace id", Secret: true},
		{Name: "api_base", Label: "api_base", Secret: false},
		{Name: "region", Label: "region", Secret: true, Optional: true},
	}
	if got := p.Fields(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Fields() = %+v\nwant %+v", got, want)
	}
}

func TestInjectSendsEachValueWhereItsFieldSays(t *testing.T) {
	p, err := configure(t, acme)
	if err != nil {
		t.Fatal(err)
	}
	inj := p.Inject(connectors.Credential{Extra: map[string]string{
		"workspace": "ws-42", "api_base": "https://api.acme.test", "region": "eu", "stale": "left over"}})
	if want := map[string]string{"X-Workspace": "ws-42", "x-region": "eu"}; !reflect.DeepEqual(inj.Headers, want) {
		t.Errorf("headers = %v, want %v", inj.Headers, want)
	}
	if want := map[string]string{"ACME_API_BASE": "https://api.acme.test", "ACME_REGION": "eu"}; !reflect.DeepEqual(inj.Env, want) {
		t.Errorf("env = %v, want %v", inj.Env, want)
	}
	if inj.Meta != nil {
		t.Errorf("configured values must not travel in _meta: %v", inj.Meta)
	}
	// An optional field left empty sends nothing.
	inj = p.Inject(connectors.Credential{Extra: map[string]string{"workspace": "ws-42", "api_base": "b"}})
	if _, ok := inj.Headers["x-region"]; ok || len(inj.Env) != 1 {
		t.Errorf("an unset optional field was injected: %v %v", inj.Headers, inj.Env)
	}
	if inj := p.Inject(connectors.Credential{}); inj.Headers != nil || inj.Env != nil {
		t.Errorf("no values, yet %v", inj)
	}
}

func TestConfigureRefusesBadFields(t *testing.T) {
	for _, c := range []struct {
		name, cfg string
		want      []string // every one must appear in the error
	}{
		{"no fields", `{"provider":"config"}`, []string{`needs a "fields" list`}},
		{"empty fields", `{"provider":"config","fields":[]}`, []string{`needs a "fields" list`}},
		{"not an object", `[1]`, []string{"not an object"}},
		{"field not an object", `{"fields":["x"]}`, []string{"fields[0]: must be an object"}},
		{"unknown key", `{"fields":[{"name":"a","header":"X-A","hedaer":"X-B"}]}`, []string{`fields[0]: unknown key "hedaer"`}},
		{"secret not a boolean", `{"fields":[{"name":"a","header":"X-A","secret":"no"}]}`, []string{"fields[0]: secret must be a boolean"}},
		{"neither header nor env", `{"fields":[{"name":"a"}]}`, []string{"a needs a header, an env name or both"}},
		{"bad name", `{"fields":[{"name":"Work Space","header":"X-A"}]}`, []string{`name "Work Space" must be lower case`}},
		{"no name", `{"fields":[{"header":"X-A"}]}`, []string{`name "" must be`}},
		{"bad header", `{"fields":[{"name":"a","header":"X A:"}]}`, []string{`header "X A:" is not a valid HTTP header name`}},
		{"transport header", `{"fields":[{"name":"a","header":"mcp-session-id"}]}`, []string{`header "mcp-session-id" is set by the transport`}},
		{"bad env", `{"fields":[{"name":"a","env":"acme-base"}]}`, []string{`env "acme-base" must match ^[A-Z_][A-Z0-9_]*$`}},
		{"env starting with a digit", `{"fields":[{"name":"a","env":"1ACME"}]}`, []string{`env "1ACME" must match`}},
		{"platform env", `{"fields":[{"name":"a","env":"PATH"}]}`, []string{`env "PATH" is reserved`}},
		{"loader env", `{"fields":[{"name":"a","env":"LD_PRELOAD"}]}`, []string{`env "LD_PRELOAD" is reserved`}},
		{"duplicates", `{"fields":[{"name":"a","header":"X-A","env":"A"},{"name":"a","header":"x-a","env":"A"}]}`,
			[]string{`fields[1]: name "a" is already used by fields[0]`, `header "x-a" is already sent by fields[0]`, `env "A" is already set by fields[0]`}},
		{"every problem at once", `{"fields":[{"name":"a"},{"name":"b","env":"b"}]}`,
			[]string{"fields[0]: a needs a header", `fields[1]: env "b" must match`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := configure(t, c.cfg)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "server acme: config provider: ") {
				t.Errorf("error %q does not say which server and provider", err)
			}
		})
	}
}

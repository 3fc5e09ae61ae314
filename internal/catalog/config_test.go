package catalog

import (
	"encoding/json"
	"os"
	"testing"
)

func TestParseConfigEmpty(t *testing.T) {
	for _, in := range []string{"", " ", "null", "{}"} {
		c, err := ParseConfig([]byte(in))
		if err != nil || c.Provider != "" || c.OAuth.ClientID != "" {
			t.Fatalf("%q: %+v %v", in, c, err)
		}
	}
}

func TestParseConfigRefusesNonObject(t *testing.T) {
	for _, in := range []string{"[]", `"x"`, "1", "{"} {
		if _, err := ParseConfig([]byte(in)); err == nil {
			t.Fatalf("%q: want an error", in)
		}
	}
}

func TestParseConfigKeepsGoodKeysOnTypeError(t *testing.T) {
	c, err := ParseConfig([]byte(`{"adapter":"coingecko","args":"not a list","oauth":{"issuer":"https://as"}}`))
	if err == nil {
		t.Fatal("want a type error")
	}
	if c.Adapter != "coingecko" || c.OAuth.Issuer != "https://as" {
		t.Fatalf("decoded keys lost: %+v", c)
	}
}

func TestParseConfigReadsEveryKey(t *testing.T) {
	c, err := ParseConfig([]byte(`{"provider":"google","sub_service":"drive","dynamic_registration":true,
	"adapter":"a","header":"X-API-KEY","scheme":"Bearer","command":"srv","args":["-v"],"resource":"https://r",
	"fields":[{"name":"k"}],
	"oauth":{"auth_url":"https://a","token_url":"https://t","revoke_url":"https://v","userinfo_url":"https://u",
	"issuer":"https://i","client_id":"id","client_secret":"s","client_secret_env":"E","auth_style":"post",
	"scopes":["x"],"auth_params":{"p":"1"},"redirect_uri":"https://cb","registered":true,
	"registrations":{"https://cb":{"client_id":"r","client_secret":"rs","auth_style":"none"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	o := c.OAuth
	if c.Provider != "google" || c.SubService != "drive" || !c.DynamicRegistration || c.Adapter != "a" ||
		c.Header != "X-API-KEY" || c.Scheme != "Bearer" || c.Command != "srv" || len(c.Args) != 1 ||
		c.Resource != "https://r" || len(c.Fields) != 1 ||
		o.AuthURL != "https://a" || o.TokenURL != "https://t" || o.RevokeURL != "https://v" || o.UserinfoURL != "https://u" ||
		o.Issuer != "https://i" || o.ClientID != "id" || o.ClientSecret != "s" || o.ClientSecretEnv != "E" ||
		o.AuthStyle != "post" || len(o.Scopes) != 1 || o.AuthParams["p"] != "1" || o.RedirectURI != "https://cb" ||
		!o.Registered || o.Registrations["https://cb"].ClientSecret != "rs" {
		t.Fatalf("%+v", c)
	}
}

// Every shipped manifest's config parses.
func TestManifestConfigsParse(t *testing.T) {
	b, err := os.ReadFile("manifests.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Servers []struct {
			Slug   string          `json:"slug"`
			Kind   Kind            `json:"kind"`
			Config json.RawMessage `json:"config"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Servers {
		if !s.Kind.Valid() {
			t.Errorf("%s: kind %q", s.Slug, s.Kind)
		}
		if _, err := ParseConfig(s.Config); err != nil {
			t.Errorf("%s: %v", s.Slug, err)
		}
	}
}

func TestNameDefaults(t *testing.T) {
	var c Config
	if c.AdapterName("x") != "x" || c.ProviderName("y") != "y" {
		t.Fatal("defaults")
	}
	c = Config{Adapter: "a", Provider: "p"}
	if c.AdapterName("x") != "a" || c.ProviderName("y") != "p" {
		t.Fatal("set")
	}
}

package api_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/apitest"
)

// send is a raw request with chosen headers (Host among them).
func send(t *testing.T, base, method, path, body string, headers map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

type guardCase struct {
	name    string
	method  string
	body    string
	headers map[string]string
	status  int
	code    string
}

func runGuardCases(t *testing.T, base, path string, cases []guardCase) {
	t.Helper()
	for _, c := range cases {
		st, body := send(t, base, c.method, path, c.body, c.headers)
		if st != c.status || (c.code != "" && !strings.Contains(body, `"code":"`+c.code+`"`)) {
			t.Errorf("%s: %d %s, want %d %s", c.name, st, body, c.status, c.code)
		}
	}
}

// Local auth mode answers this machine's own callers only: a rebound Host,
// a cross-site request and a form body are refused; a normal local request works.
func TestLocalModeRefusesCrossSiteAndRebinding(t *testing.T) {
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) {
		u, err := access.LocalUser(context.Background(), d.DB)
		if err != nil {
			t.Fatal(err)
		}
		d.AuthMode, d.LocalUserID = "local", u.ID
	}})
	base := e.HTTP.URL
	host := strings.TrimPrefix(base, "http://")
	port := host[strings.LastIndex(host, ":"):]
	self := "http://" + host
	with := func(kv ...string) map[string]string {
		m := map[string]string{"Content-Type": "application/json"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	runGuardCases(t, base, "/api/orgs", []guardCase{
		{"local GET", "GET", "", nil, 200, ""},
		{"local POST", "POST", `{"name":"Local"}`, with("Origin", self, "Sec-Fetch-Site", "same-origin"), 201, ""},
		{"localhost spelling", "POST", `{"name":"Local 2"}`, with("Host", "localhost"+port), 201, ""},
		{"rebound host", "GET", "", map[string]string{"Host": "attacker.example" + port}, 421, "host_refused"},
		{"rebound host POST", "POST", `{"name":"x"}`, with("Host", "attacker.example"+port), 421, "host_refused"},
		{"another port", "GET", "", map[string]string{"Host": "127.0.0.1:1"}, 421, "host_refused"},
		{"cross-site", "POST", `{"name":"x"}`, with("Sec-Fetch-Site", "cross-site"), 403, "cross_site_refused"},
		{"same-site (another local port)", "POST", `{"name":"x"}`, with("Sec-Fetch-Site", "same-site", "Origin", "http://localhost:5173"), 403, "cross_site_refused"},
		{"foreign origin", "POST", `{"name":"x"}`, with("Origin", "https://attacker.example"), 403, "cross_site_refused"},
		{"form body", "POST", `name=x`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "json_required"},
		{"text body", "POST", `{"name":"x"}`, map[string]string{"Content-Type": "text/plain"}, 415, "json_required"},
	})
	if n := e.Count("organisations"); n != 2 {
		t.Fatalf("%d organisations: a refused request wrote one", n)
	}
	// The provider's redirect back is a cross-site navigation: the public
	// callback stays reachable (it has its own binding).
	if st, body := send(t, base, "GET", api.CallbackPath+"?state=nope&code=x", "", map[string]string{"Sec-Fetch-Site": "cross-site"}); st != 400 {
		t.Fatalf("callback: %d %s", st, body)
	}
}

// The tokenless codec serves the loopback Temporal UI (another local port is
// the same site) and nobody else.
func TestTokenlessCodecRefusesCrossSiteAndRebinding(t *testing.T) {
	e, codec := codecEnv(t, true)
	sealed, _ := codec.Encode([]*commonpb.Payload{{Data: []byte("x")}})
	body := `{"payloads":[{"metadata":{"encoding":"` + b64(string(sealed[0].Metadata["encoding"])) + `"},"data":"` + b64(string(sealed[0].Data)) + `"}]}`
	port := e.HTTP.URL[strings.LastIndex(e.HTTP.URL, ":"):]
	ui := map[string]string{"Content-Type": "application/json", "Origin": "http://localhost:8233", "Sec-Fetch-Site": "same-site"}
	runGuardCases(t, e.HTTP.URL, api.CodecPath+"/decode", []guardCase{
		{"the loopback UI", "POST", body, ui, 200, ""},
		{"rebound host", "POST", body, map[string]string{"Content-Type": "application/json", "Host": "attacker.example" + port}, 421, "host_refused"},
		{"cross-site", "POST", body, map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403, "cross_site_refused"},
		{"foreign origin", "POST", body, map[string]string{"Content-Type": "application/json", "Origin": "https://attacker.example"}, 403, "cross_site_refused"},
		{"text body", "POST", body, map[string]string{"Content-Type": "text/plain"}, 415, "json_required"},
	})
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

package api_test

import (
	"net/http"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/payloadcodec"
	"github.com/guilds/guilds/internal/secret"
)

func codecEnv(t *testing.T, withoutToken bool) (*apitest.Env, *payloadcodec.Codec) {
	t.Helper()
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	codec := payloadcodec.New(kr, true)
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) {
		d.Codec, d.CodecWithoutToken = codec, withoutToken
	}})
	return e, codec
}

// remote is the SDK's own client of a remote codec, as the Temporal CLI uses it.
func remote(e *apitest.Env, token string) converter.PayloadCodec {
	return converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{
		Endpoint: e.HTTP.URL + api.CodecPath,
		ModifyRequest: func(r *http.Request) error {
			if token != "" {
				r.Header.Set("Authorization", "Bearer "+token)
			}
			return nil
		},
	})
}

// The endpoint speaks Temporal's remote codec protocol: what the worker
// sealed, the CLI (with an admin token) reads back in clear.
func TestCodecEndpointDecodesForAnAdmin(t *testing.T) {
	t.Parallel()
	e, codec := codecEnv(t, false)
	in := []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"the demo is on Friday"`)}}
	sealed, err := codec.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := remote(e, e.AdminToken).Decode(sealed)
	if err != nil || len(out) != 1 || string(out[0].Data) != `"the demo is on Friday"` {
		t.Fatalf("decode: %v %v", out, err)
	}
	again, err := remote(e, e.AdminToken).Encode(in)
	if err != nil || string(again[0].Metadata["encoding"]) != payloadcodec.Encoding {
		t.Fatalf("encode: %v %v", again, err)
	}

	if _, err := remote(e, "").Decode(sealed); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("without a token: %v", err)
	}
	if _, err := remote(e, e.Operator("")).Decode(sealed); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("with an operator token: %v", err)
	}
	if r := e.Admin("POST", api.CodecPath+"/decode", `{"payloads": 3}`); r.Status != 400 || r.ErrorCode() != "bad_request" {
		t.Errorf("malformed body: %d %s", r.Status, r.Body)
	}
	sealed[0].Data[len(sealed[0].Data)-1] ^= 1
	if _, err := remote(e, e.AdminToken).Decode(sealed); err == nil || !strings.Contains(err.Error(), "cannot decrypt") {
		t.Errorf("tampered payload: %v", err)
	}
}

// On a loopback-only API the dev UI decodes from the browser: no token, and
// CORS for loopback origins only.
func TestCodecEndpointServesTheLoopbackUI(t *testing.T) {
	t.Parallel()
	e, codec := codecEnv(t, true)
	sealed, _ := codec.Encode([]*commonpb.Payload{{Data: []byte("x")}})
	if out, err := remote(e, "").Decode(sealed); err != nil || string(out[0].Data) != "x" {
		t.Fatalf("decode without a token: %v %v", out, err)
	}
	for _, c := range []struct {
		origin string
		allow  bool
	}{{"http://127.0.0.1:8233", true}, {"http://localhost:8233", true}, {"https://ui.example.com", false}} {
		req, _ := http.NewRequest("OPTIONS", e.HTTP.URL+api.CodecPath+"/decode", nil)
		req.Header.Set("Origin", c.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("Access-Control-Allow-Origin")
		want := 204
		if !c.allow {
			want = 403 // another site may not use the tokenless codec
		}
		if resp.StatusCode != want || (got == c.origin) != c.allow || (!c.allow && got != "") {
			t.Errorf("preflight from %s: %d, allow-origin %q", c.origin, resp.StatusCode, got)
		}
		if c.allow && !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "X-Namespace") {
			t.Errorf("preflight from %s: allow-headers %q", c.origin, resp.Header.Get("Access-Control-Allow-Headers"))
		}
	}
}

func TestCodecEndpointOff(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	if r := e.Admin("POST", api.CodecPath+"/decode", `{"payloads":[]}`); r.Status != 404 || r.ErrorCode() != "codec_off" {
		t.Errorf("%d %s", r.Status, r.Body)
	}
}

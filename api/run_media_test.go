package api_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/runs"
)

// A run's kept image and app page are served to the operators of the run's
// organisation only, each with its own type, nosniff and a sandboxing CSP;
// the media list names them without their bytes. Another organisation's
// operator, a wrong place and a bad place are refused.
func TestRunMediaRoutes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	org, guild, agent := e.Hierarchy()
	op, other := e.Operator(org), e.Operator("")
	r, err := runs.Create(ctx, e.DB, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct", Budget: 5, Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 64)...)
	page := `<!doctype html><p>chart</p><script>document.title="x"</script>`
	if err := runs.SaveImage(ctx, e.DB, r.ID, runs.Image{Seq: 3, Idx: 1, MediaType: "image/png", Data: png}); err != nil {
		t.Fatal(err)
	}
	if err := runs.SaveApp(ctx, e.DB, r.ID, runs.App{Seq: 3, Idx: 1, URI: "ui://apps/chart", MediaType: "text/html;profile=mcp-app", HTML: page}); err != nil {
		t.Fatal(err)
	}
	base := "/api/runs/" + r.ID

	var media []runs.Media
	resp := e.Do(op, "GET", base+"/media", nil)
	resp.JSON(&media)
	if resp.Status != 200 || len(media) != 2 || media[0].Kind != "image" || media[0].Size != len(png) ||
		media[1].Kind != "app" || media[1].URI != "ui://apps/chart" || media[1].Size != len(page) || bytes.Contains(resp.Body, []byte("<script")) {
		t.Fatalf("media = %d %s", resp.Status, resp.Body)
	}

	resp = e.Do(op, "GET", base+"/images/3/1", nil)
	if resp.Status != 200 || !bytes.Equal(resp.Body, png) || resp.Header.Get("Content-Type") != "image/png" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "sandbox;") {
		t.Fatalf("image = %d %v", resp.Status, resp.Header)
	}

	resp = e.Do(op, "GET", base+"/apps/3/1", nil)
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.Status != 200 || string(resp.Body) != page || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Set-Cookie") != "" {
		t.Fatalf("app = %d %v %s", resp.Status, resp.Header, resp.Body)
	}
	for _, want := range []string{"sandbox allow-scripts;", "default-src 'none'", "script-src 'unsafe-inline'", "connect-src 'none'",
		"img-src data:", "form-action 'none'", "frame-ancestors 'self'"} {
		if !strings.Contains(csp, want) {
			t.Fatalf("app CSP lacks %q: %s", want, csp)
		}
	}
	if strings.Contains(csp, "allow-same-origin") || strings.Contains(csp, "allow-top-navigation") || strings.Contains(csp, "allow-popups") {
		t.Fatalf("app CSP loosens the sandbox: %s", csp)
	}

	for _, path := range []string{base + "/media", base + "/images/3/1", base + "/apps/3/1"} {
		if resp := e.Do(other, "GET", path, nil); resp.Status != 404 || bytes.Contains(resp.Body, []byte("chart")) {
			t.Fatalf("another organisation's operator: %s = %d %s", path, resp.Status, resp.Body)
		}
		if resp := e.Do("", "GET", path, nil); resp.Status != 401 {
			t.Fatalf("no token: %s = %d", path, resp.Status)
		}
	}
	for path, want := range map[string]int{base + "/apps/3/2": 404, base + "/images/4/1": 404, base + "/apps/0/1": 422, base + "/images/x/1": 422} {
		if resp := e.Do(op, "GET", path, nil); resp.Status != want || resp.ErrorCode() == "" {
			t.Fatalf("%s = %d %s, want %d", path, resp.Status, resp.Body, want)
		}
	}
}

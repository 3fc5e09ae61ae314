package browserops

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/browserproto"
)

// loadWait bounds waiting for a page's load event; the page is reported
// as it stands when it runs out.
const loadWait = 30 * time.Second

func navigate(ctx context.Context, s *session, raw json.RawMessage) browserproto.Response {
	var a navigateArgs
	_ = json.Unmarshal(raw, &a)
	u, _ := checkURL(a.URL)
	if s.req.ProxySocket != "" && u.Scheme != "about" && !isLoopbackHost(u.Hostname()) {
		if msg := s.cfg.probe(ctx, u); msg != "" {
			return browserproto.Errorf("%s", msg)
		}
	}
	_ = s.c.call(ctx, "Page.enable", nil, nil)
	_ = s.c.call(ctx, "Network.enable", params{"maxTotalBufferSize": 0, "maxResourceBufferSize": 0}, nil)
	responses := s.c.subscribe("Network.responseReceived")
	loaded := s.c.subscribe("Page.loadEventFired")
	var nav struct {
		FrameID   string `json:"frameId"`
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	if err := s.c.call(ctx, "Page.navigate", params{"url": u.String()}, &nav); err != nil {
		return browserproto.Errorf("cannot open %s: %v", u, err)
	}
	if nav.ErrorText != "" {
		return browserproto.Errorf("%s", netError(nav.ErrorText, u))
	}
	status, statusText, timedOut := 0, "", false
	document := func(r json.RawMessage) {
		var e struct {
			RequestID string `json:"requestId"`
			Type      string `json:"type"`
			Response  struct {
				Status     int    `json:"status"`
				StatusText string `json:"statusText"`
			} `json:"response"`
		}
		if json.Unmarshal(r, &e) == nil && e.Type == "Document" && (e.RequestID == nav.LoaderID || nav.LoaderID == "") {
			status, statusText = e.Response.Status, e.Response.StatusText
		}
	}
	wait := time.NewTimer(loadWait)
	defer wait.Stop()
	for done := false; !done; {
		select {
		case r := <-responses:
			document(r)
		case <-loaded:
			// The document's response came before its load event, but the
			// two wait on separate channels and select picks either: take
			// what is already there.
			for drained := false; !drained; {
				select {
				case r := <-responses:
					document(r)
				default:
					drained = true
				}
			}
			done = true
		case <-wait.C:
			done, timedOut = true, true
		case <-ctx.Done():
			done, timedOut = true, true
		}
	}
	_ = s.c.call(context.WithoutCancel(ctx), "Network.disable", nil, nil)
	var r evalResult
	var here []string
	if s.c.call(ctx, "Runtime.evaluate", params{"expression": "[location.href, document.title]", "returnByValue": true}, &r) == nil {
		_ = r.decode(&here)
	}
	if len(here) != 2 {
		here = []string{u.String(), ""}
	}
	meta := map[string]any{"url": here[0], "status": status}
	if status >= 400 {
		if statusText == "" {
			statusText = http.StatusText(status)
		}
		return browserproto.Response{Text: fmt.Sprintf("ERROR: %s answered HTTP %d %s (the browser shows the page it sent, %q)",
			here[0], status, statusText, clip(here[1], 80)), Meta: meta}
	}
	text := fmt.Sprintf("opened %s", here[0])
	if status > 0 {
		text += fmt.Sprintf(" (HTTP %d)", status)
	}
	text += fmt.Sprintf(" %q", clip(here[1], 120))
	if timedOut {
		text += fmt.Sprintf("; it had not finished loading after %s, so it may still be filling in", loadWait)
		meta["load_timeout"] = true
	}
	return browserproto.Response{Text: text + "; call browser_snapshot to see it", Meta: meta}
}

// netError says a Chromium network error (net::ERR_...) in words.
func netError(code string, u *url.URL) string {
	host := u.Hostname()
	c := strings.TrimPrefix(code, "net::")
	switch {
	case c == "ERR_NAME_NOT_RESOLVED" || c == "ERR_NAME_RESOLUTION_FAILED":
		return fmt.Sprintf("cannot open %s: DNS: the host name %s does not resolve (%s)", u, host, c)
	case strings.HasPrefix(c, "ERR_CERT_"):
		return fmt.Sprintf("cannot open %s: TLS: the certificate of %s is not valid (%s)", u, host, c)
	case strings.HasPrefix(c, "ERR_SSL_") || c == "ERR_BAD_SSL_CLIENT_AUTH_CERT":
		return fmt.Sprintf("cannot open %s: TLS: the secure connection to %s failed (%s)", u, host, c)
	case c == "ERR_CONNECTION_REFUSED":
		return fmt.Sprintf("cannot open %s: connection refused: nothing listens on %s", u, u.Host)
	case c == "ERR_CONNECTION_TIMED_OUT" || c == "ERR_TIMED_OUT":
		return fmt.Sprintf("cannot open %s: timed out connecting to %s (%s)", u, u.Host, c)
	case c == "ERR_TUNNEL_CONNECTION_FAILED" || c == "ERR_PROXY_CONNECTION_FAILED":
		return fmt.Sprintf("cannot open %s: the platform's network proxy did not connect to %s (refused by the outbound address policy, or unreachable) (%s)", u, u.Host, c)
	case c == "ERR_ABORTED":
		return fmt.Sprintf("opening %s was aborted (%s): it may be a download, or the page went elsewhere", u, c)
	case c == "ERR_INTERNET_DISCONNECTED" || c == "ERR_ADDRESS_UNREACHABLE" || c == "ERR_NETWORK_ACCESS_DENIED":
		return fmt.Sprintf("cannot open %s: %s is unreachable from this sandbox (%s)", u, u.Host, c)
	}
	return fmt.Sprintf("cannot open %s: %s", u, c)
}

func isLoopbackHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// probe asks the platform's proxy, through the relay, whether it will
// connect to u's host, so a refusal or a DNS failure is said plainly
// (Chromium reports any failed tunnel as one opaque error). "" = it will.
func (c Config) probe(ctx context.Context, u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	hostPort := net.JoinHostPort(u.Hostname(), port)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", c.RelayAddr)
	if err != nil {
		return fmt.Sprintf("cannot open %s: the browser's network relay does not answer: %v", u, err)
	}
	defer func() { _ = conn.Close() }()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostPort, hostPort); err != nil {
		return fmt.Sprintf("cannot open %s: the platform's network proxy: %v", u, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return fmt.Sprintf("cannot open %s: the platform's network proxy did not answer: %v", u, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusOK {
		return ""
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	why := strings.TrimSpace(string(body))
	if why == "" {
		why = resp.Status
	}
	return fmt.Sprintf("cannot open %s: %s", u, why)
}

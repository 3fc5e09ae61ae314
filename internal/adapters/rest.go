package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxBody bounds what an adapter reads from a service's answer.
const maxBody = 8 << 20

// HTTPError is a service's non-2xx answer. Its message carries the status and
// the start of the body (services put their reason there); the result
// pipeline redacts any secret it might echo.
type HTTPError struct {
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("the service answered HTTP %d", e.Status)
	}
	return fmt.Sprintf("the service answered HTTP %d: %s", e.Status, e.Body)
}

// Refused reports whether the service refused the credential (401 or 403).
func (e *HTTPError) Refused() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// Rejected reports whether err means the service refused the login's key:
// ErrRejected from an adapter's Check, or a 401/403 answer.
func Rejected(err error) bool {
	var he *HTTPError
	return errors.Is(err, ErrRejected) || (errors.As(err, &he) && he.Refused())
}

// GetJSON sends GET base+path?query with header and decodes a 2xx JSON
// answer into out. Other answers are *HTTPError.
func (c Conn) GetJSON(ctx context.Context, path string, query url.Values, header http.Header, out any) error {
	return c.DoJSON(ctx, http.MethodGet, c.BaseURL, path, query, header, nil, out)
}

// DoJSON is GetJSON for any method and base URL (a service may have a second
// host, e.g. a paid tier's).
func (c Conn) DoJSON(ctx context.Context, method, base, path string, query url.Values, header http.Header, body io.Reader, out any) error {
	u := strings.TrimRight(base, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("the service could not be reached: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("reading the service's answer: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &HTTPError{Status: resp.StatusCode, Body: clip(strings.TrimSpace(string(raw)), 300)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the service's answer is not the JSON expected: %w", err)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

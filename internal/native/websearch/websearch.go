// Package websearch is tavily_search: the orchestrator calls Tavily's search
// API with the box's key (TAVILY_API_KEY, the web-search integration) and
// returns title, URL and snippet of each source. The key goes only into the
// request's Authorization header: never into a sandbox, a result or a log.
package websearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/tools"
)

// ToolName is the model-facing name.
const ToolName = "tavily_search"

// DefaultBaseURL is Tavily's API; GUILDS_TAVILY_BASE_URL replaces it.
const DefaultBaseURL = "https://api.tavily.com"

// Timeout bounds one search.
const Timeout = 30 * time.Second

// Integration and variable the key comes from.
const (
	Integration = "web-search"
	KeyVariable = "TAVILY_API_KEY"
)

// snippetMax bounds each source's snippet.
const snippetMax = 400

// Deps are what the tool needs.
type Deps struct {
	// Key returns the box's Tavily key ("" when the integration is off).
	Key func() string
	// BaseURL is Tavily's endpoint (DefaultBaseURL when empty).
	BaseURL string
	// HTTP sends the request; nil means a client with Timeout.
	HTTP *http.Client
}

var schema = json.RawMessage(`{"type":"object","properties":{
	"query":{"type":"string","minLength":1,"maxLength":400,"description":"what to search for, in natural language"},
	"max_results":{"type":"integer","minimum":1,"maximum":10,"description":"how many sources (default 5)"}},
	"required":["query"],"additionalProperties":false}`)

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "search", Group: "Web search", Gate: tools.GateBinding, Integration: Integration}

// Register adds tavily_search to reg. It is declared on every process, so
// offers and the Tools view list it; runs offer it only when the
// integration is on (internal/grants).
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	if d.BaseURL == "" {
		d.BaseURL = DefaultBaseURL
	}
	d.BaseURL = strings.TrimRight(d.BaseURL, "/")
	if d.HTTP == nil {
		d.HTTP = &http.Client{Timeout: Timeout}
	}
	fam.Register(tools.Tool{Name: ToolName, Class: tools.ClassDefault, Idempotent: true, Schema: schema,
		Description: "Search the web. Returns, for each source, its title, URL and a snippet. Ask in natural language.",
		Handler:     d.search})
}

type request struct {
	Query       string `json:"query"`
	SearchDepth string `json:"search_depth"`
	MaxResults  int    `json:"max_results"`
}

type response struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

func (d Deps) search(ctx context.Context, call tools.Call) (string, error) {
	var in struct {
		Query      string `json:"query"`
		MaxResults int    `json:"max_results"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", errors.New("arguments: expected an object with query")
	}
	in.Query = strings.TrimSpace(in.Query)
	if in.Query == "" {
		return "", errors.New("query: is empty")
	}
	if in.MaxResults == 0 {
		in.MaxResults = 5
	}
	key := ""
	if d.Key != nil {
		key = d.Key()
	}
	if key == "" {
		return "", fmt.Errorf("web search is not set up on this box: the operator must set %s", KeyVariable)
	}
	body, _ := json.Marshal(request{Query: in.Query, SearchDepth: "advanced", MaxResults: in.MaxResults})
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.BaseURL+"/search", bytes.NewReader(body))
	if err != nil {
		return refusal("Tavily: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := d.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return refusal("Tavily did not answer within %s; try again, or with a narrower query", Timeout)
		}
		return refusal("Tavily could not be reached; try again later")
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return refusal("Tavily's answer could not be read; try again")
	}
	if resp.StatusCode != http.StatusOK {
		return tools.ErrorResult(statusError(resp, raw)), nil
	}
	var out response
	if err := json.Unmarshal(raw, &out); err != nil {
		return refusal("Tavily's answer was not the JSON it documents; try again later")
	}
	return format(in.Query, out), nil
}

// refusal is the ERROR line of a search Tavily did not answer. It is the
// result itself, not a handler error: these lines name Tavily first.
func refusal(format string, args ...any) (string, error) {
	return tools.ErrorResult(fmt.Sprintf(format, args...)), nil
}

// statusError turns Tavily's refusals into a line the model can act on.
func statusError(resp *http.Response, raw []byte) string {
	detail := tavilyDetail(raw)
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Sprintf("Tavily refused the box's key (HTTP %d): the operator must check %s", code, KeyVariable)
	case code == http.StatusTooManyRequests:
		hint := "wait a minute"
		if ra := strings.TrimSpace(resp.Header.Get("Retry-After")); ra != "" {
			if n, err := strconv.Atoi(ra); err == nil {
				hint = fmt.Sprintf("retry after %d seconds", n)
			} else {
				hint = "retry after " + clip(ra, 40)
			}
		}
		return fmt.Sprintf("Tavily's rate limit was reached (HTTP 429): %s", hint)
	case code == 432 || code == 433:
		return fmt.Sprintf("Tavily's plan limit for this box's key is reached (HTTP %d)%s: the operator must raise it", code, detail)
	case code >= 500:
		return fmt.Sprintf("Tavily failed (HTTP %d)%s; try again later", code, detail)
	case code == http.StatusBadRequest:
		return fmt.Sprintf("Tavily refused the query (HTTP 400)%s; rephrase it", detail)
	}
	return fmt.Sprintf("Tavily answered HTTP %d%s", resp.StatusCode, detail)
}

// tavilyDetail is ": <message>" from Tavily's {"detail": {"error": …}} or
// {"detail": "…"} body, clipped; "" when there is none.
func tavilyDetail(raw []byte) string {
	var b struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &b) != nil || len(b.Detail) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(b.Detail, &s) != nil {
		var o struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(b.Detail, &o)
		s = o.Error
	}
	if s = strings.TrimSpace(s); s == "" {
		return ""
	}
	return ": " + clip(s, 200)
}

func format(query string, r response) string {
	if len(r.Results) == 0 {
		return fmt.Sprintf("no sources found for %q", clip(query, 100))
	}
	var b strings.Builder
	for i, s := range r.Results {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, oneLine(clip(s.Title, 200)), s.URL)
		if snip := oneLine(clip(s.Content, snippetMax)); snip != "" {
			fmt.Fprintf(&b, "   %s\n", snip)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

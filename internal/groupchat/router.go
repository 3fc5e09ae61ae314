package groupchat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// The group-routing integration: a model behind an OpenAI-compatible chat
// completions endpoint that answers, as structured output, which agents
// answer a message and how much history they see.
const (
	Integration     = "group-routing"
	KeyVariable     = "TYPESAFE_API_KEY"
	ModelVariable   = "TYPESAFE_MODEL"
	DefaultBaseURL  = "https://api.typesafe.ai/v1"
	DefaultModel    = "typesafe-router"
	DefaultTimeout  = 8 * time.Second
	DefaultHistory  = 20 // messages a recipient sees when nothing else says
	MaxHistory      = 50
	routerContext   = 20 // recent messages the router reads to decide
	routerClipRunes = 600
)

// Router asks the group-routing model. Key is a credential: it goes in the
// Authorization header only and is scrubbed from any error text.
type Router struct {
	BaseURL string
	Key     string
	Model   string
	Timeout time.Duration // per request; DefaultTimeout when zero
	HTTP    *http.Client  // nil: a client of its own
}

// RouterInput is what the model decides from.
type RouterInput struct {
	Agents  []Agent
	History []Message // recent messages, oldest first, ending with Message
	Message Message
}

// RouterAnswer is the structured output the model returns.
type RouterAnswer struct {
	Recipients []string `json:"recipients"` // agent names
	History    int      `json:"history"`
}

// Decide asks the model; any failure (transport, status, timeout, a body
// that is not the schema) is an error the caller falls back on.
func (r *Router) Decide(ctx context.Context, in RouterInput) (RouterAnswer, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(r.request(in))
	if err != nil {
		return RouterAnswer{}, err
	}
	base := strings.TrimRight(r.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return RouterAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.Key)
	client := r.HTTP
	if client == nil {
		client = &http.Client{}
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return RouterAnswer{}, fmt.Errorf("the routing model did not answer within %s", timeout)
		}
		return RouterAnswer{}, fmt.Errorf("the routing model is unreachable: %s", r.scrub(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return RouterAnswer{}, fmt.Errorf("reading the routing model's answer: %s", r.scrub(err.Error()))
	}
	if resp.StatusCode/100 != 2 {
		return RouterAnswer{}, fmt.Errorf("the routing model answered %d: %s", resp.StatusCode, r.scrub(clip(string(raw))))
	}
	var wire struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil || len(wire.Choices) == 0 {
		return RouterAnswer{}, fmt.Errorf("the routing model sent no choice")
	}
	var out RouterAnswer
	dec := json.NewDecoder(strings.NewReader(wire.Choices[0].Message.Content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil || out.Recipients == nil {
		return RouterAnswer{}, fmt.Errorf("the routing model's answer is not {recipients, history}: %s", r.scrub(clip(wire.Choices[0].Message.Content)))
	}
	return out, nil
}

type routerMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type routerRequest struct {
	Model          string          `json:"model"`
	Messages       []routerMessage `json:"messages"`
	ResponseFormat any             `json:"response_format"`
	Temperature    float64         `json:"temperature"`
}

const routerInstructions = `You route the messages of a team's group chat. Given the team's agents and the recent chat, ` +
	`decide which agents should answer the last message and how many of the most recent messages (including the last) ` +
	`each of them needs to read. An agent named with @name is usually addressed. Choose nobody when no answer is needed. ` +
	`Never choose the author of the last message. Answer with JSON: {"recipients": [agent names], "history": number}.`

func (r *Router) request(in RouterInput) routerRequest {
	names := make([]string, 0, len(in.Agents))
	var team strings.Builder
	for _, a := range in.Agents {
		names = append(names, a.Name)
		fmt.Fprintf(&team, "- %s", a.Name)
		if line := firstLine(a.Prompt); line != "" {
			fmt.Fprintf(&team, ": %s", clipRunes(line, 200))
		}
		if a.Responder {
			team.WriteString(" (answers operator messages nobody is addressed in)")
		}
		team.WriteString("\n")
	}
	var chat strings.Builder
	for _, m := range in.History {
		fmt.Fprintf(&chat, "#%d %s (%s): %s\n", m.Seq, m.Author.Name, m.Author.Kind, clipRunes(m.Content, routerClipRunes))
	}
	user := fmt.Sprintf("Agents:\n%s\nRecent chat, oldest first:\n%s\nThe last message is #%d by %s.",
		team.String(), chat.String(), in.Message.Seq, in.Message.Author.Name)
	items := map[string]any{"type": "string"}
	if len(names) > 0 {
		items["enum"] = names
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"recipients": map[string]any{"type": "array", "items": items},
			"history":    map[string]any{"type": "integer", "minimum": 1, "maximum": MaxHistory},
		},
		"required":             []string{"recipients", "history"},
		"additionalProperties": false,
	}
	model := r.Model
	if model == "" {
		model = DefaultModel
	}
	return routerRequest{
		Model:       model,
		Messages:    []routerMessage{{Role: "system", Content: routerInstructions}, {Role: "user", Content: user}},
		Temperature: 0,
		ResponseFormat: map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "group_route", "strict": true, "schema": schema}},
	}
}

func (r *Router) scrub(s string) string {
	if r.Key == "" {
		return s
	}
	return strings.ReplaceAll(s, r.Key, "[key]")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func clip(s string) string { return clipRunes(strings.TrimSpace(s), 300) }

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Message is a chat message in the OpenAI wire format. A message with Parts
// (a user message carrying images) sends them as its content instead of
// Content.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Parts      []Part     `json:"-"`
}

// Part is one piece of a message's content: {"type":"text","text":…} or
// {"type":"image_url","image_url":{"url":"data:image/png;base64,…"}}.
type Part struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`
}

// ImageURL is an image part's address; a data: URL carries the bytes.
type ImageURL struct {
	URL string `json:"url"`
}

// MarshalJSON writes Parts as the content when there are any.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	if len(m.Parts) == 0 {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		Content []Part `json:"content"`
	}{plain(m), m.Parts})
}

// HasImages reports whether any message of req carries an image part.
func (req Request) HasImages() bool {
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.ImageURL != nil {
				return true
			}
		}
	}
	return false
}

// WithoutImages is req with every image part left out (their descriptions
// stay in the tool results the model reads).
func (req Request) WithoutImages() Request {
	out := req
	out.Messages = make([]Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		if len(m.Parts) == 0 {
			out.Messages = append(out.Messages, m)
		}
	}
	return out
}

// RefusesImages reports whether err is a provider refusing a request, which
// for a request with images most often means the model takes no images.
func RefusesImages(err error) bool {
	var me *Error
	if !errors.As(err, &me) {
		return false
	}
	switch me.Status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// ToolCall is a function call the model asks for.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function offered to the model.
type Tool struct {
	Type     string       `json:"type"` // "function"
	Function FunctionSpec `json:"function"`
}

// FunctionSpec describes an offered function.
type FunctionSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one chat-completions request.
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
}

// Usage counts tokens of one completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Response is the first choice of a completion.
type Response struct {
	Content      string
	ToolCalls    []ToolCall
	FinishReason string
	Usage        Usage
}

// Error is a refused or failed model call. Message never holds the key.
type Error struct {
	Status  int // HTTP status; 0 for a transport failure
	Message string
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return "model provider unreachable: " + e.Message
	}
	return fmt.Sprintf("model provider answered %d: %s", e.Status, e.Message)
}

// Retryable reports whether trying again later may succeed: rate limits,
// server errors and transport failures.
func (e *Error) Retryable() bool {
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout || e.Status >= 500
}

// Complete sends one chat-completions request to t.
func (r *Resolver) Complete(ctx context.Context, t Target, req Request) (Response, error) {
	req.Model = t.Model
	body, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, t.BaseURL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+t.Key)
	if t.Provider == OpenRouter {
		hreq.Header.Set("X-Title", "guilds")
	}
	resp, err := r.client().Do(hreq)
	if err != nil {
		return Response{}, &Error{Message: scrub(err.Error(), t.Key)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return Response{}, &Error{Message: scrub(err.Error(), t.Key)}
	}
	if resp.StatusCode/100 != 2 {
		return Response{}, &Error{Status: resp.StatusCode, Message: errorMessage(raw, t.Key)}
	}
	var wire struct {
		Choices []struct {
			Message struct {
				Content   *string    `json:"content"`
				ToolCalls []ToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage Usage `json:"usage"`
		Error *struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return Response{}, &Error{Status: http.StatusBadGateway, Message: "the provider sent a body that is not JSON"}
	}
	if wire.Error != nil { // OpenRouter reports some upstream failures in a 200
		return Response{}, &Error{Status: http.StatusBadGateway, Message: clip(scrub(wire.Error.Message, t.Key))}
	}
	if len(wire.Choices) == 0 {
		return Response{}, &Error{Status: http.StatusBadGateway, Message: "the provider sent no choice"}
	}
	c := wire.Choices[0]
	out := Response{ToolCalls: c.Message.ToolCalls, FinishReason: c.FinishReason, Usage: wire.Usage}
	if c.Message.Content != nil {
		out.Content = *c.Message.Content
	}
	return out, nil
}

func (r *Resolver) client() *http.Client {
	if r.HTTP != nil {
		return r.HTTP
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	return &http.Client{Timeout: timeout}
}

// errorMessage is the provider's reason from an error body, key scrubbed.
func errorMessage(raw []byte, key string) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Detail string `json:"detail"`
	}
	msg := strings.TrimSpace(string(raw))
	if json.Unmarshal(raw, &e) == nil {
		if e.Error.Message != "" {
			msg = e.Error.Message
		} else if e.Detail != "" {
			msg = e.Detail
		}
	}
	return clip(scrub(msg, key))
}

// clip shortens a provider's message for the run's error. It runs after
// scrub: clipping first could cut the key, leaving a start of it that no
// longer matches.
func clip(s string) string {
	const limit = 300
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// scrub removes the key from a message, in case a provider or proxy echoes it.
func scrub(msg, key string) string {
	if key == "" {
		return msg
	}
	return strings.ReplaceAll(msg, key, "[key]")
}

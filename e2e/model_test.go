package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// toolCall is one function call a scripted turn makes.
type toolCall struct {
	Name string
	Args map[string]any
}

// scriptedModel is an OpenAI-compatible chat completions endpoint that plays
// its turns in order (each a list of tool calls, or none for the final
// answer) and keeps every request it received.
type scriptedModel struct {
	*httptest.Server
	key string

	mu       sync.Mutex
	turns    [][]toolCall
	requests [][]byte
}

func newScriptedModel(t *testing.T, key string, turns ...[]toolCall) *scriptedModel {
	m := &scriptedModel{key: key, turns: turns}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *scriptedModel) serve(w http.ResponseWriter, r *http.Request) {
	var raw json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		http.Error(w, `{"error":{"message":"bad body"}}`, http.StatusBadRequest)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+m.key {
		http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, raw)
	var turn []toolCall
	if len(m.turns) > 0 {
		turn, m.turns = m.turns[0], m.turns[1:]
	}
	m.mu.Unlock()
	msg := map[string]any{"role": "assistant", "content": "Done."}
	finish := "stop"
	if len(turn) > 0 {
		var calls []any
		for i, c := range turn {
			args, _ := json.Marshal(c.Args)
			calls = append(calls, map[string]any{"id": "call_" + c.Name + "_" + string(rune('a'+i)), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(args)}})
		}
		msg = map[string]any{"role": "assistant", "content": "", "tool_calls": calls}
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": finish, "message": msg}}})
}

// Received is every request body the model was sent, joined.
func (m *scriptedModel) Received() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var all []byte
	for _, r := range m.requests {
		all = append(append(all, r...), '\n')
	}
	return string(all)
}

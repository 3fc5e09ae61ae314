package mcppool

import (
	"encoding/json"
	"testing"
)

// An input_required result of forms is read with each schema as the server
// wrote it (its keys in their order) and its requestState; one that also
// asks for sampling, or any other result, is left to mcp-go's loop.
func TestFormsAskedKeepsTheServersSchema(t *testing.T) {
	raw := json.RawMessage(`{"resultType":"input_required","requestState":"s1","inputRequests":{
		"a":{"method":"elicitation/create","params":{"message":"Who?","requestedSchema":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number"}}}}},
		"b":{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.org/in","elicitationId":"e1"}}}}`)
	forms, state, ok := formsAsked(raw)
	if !ok || state != "s1" || len(forms) != 2 {
		t.Fatalf("forms %+v, state %q, ok %v", forms, state, ok)
	}
	if got := string(forms["a"].Schema); got != `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number"}}}` || forms["a"].Mode != "form" {
		t.Errorf("form a: %+v (%s)", forms["a"], got)
	}
	if forms["b"].Mode != "url" || forms["b"].URL != "https://example.org/in" || len(forms["b"].Schema) != 0 {
		t.Errorf("form b: %+v", forms["b"])
	}
	for _, other := range []string{
		`{"resultType":"input_required","inputRequests":{"a":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}}}`,
		`{"content":[{"type":"text","text":"done"}]}`,
		`{"resultType":"input_required","inputRequests":{}}`,
	} {
		if _, _, ok := formsAsked(json.RawMessage(other)); ok {
			t.Errorf("held: %s", other)
		}
	}
}

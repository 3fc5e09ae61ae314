package approvals

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Version names the effective policy of one tool for one agent: the scope
// whose switch decided, the switch itself and the rules. It is a digest of
// its content, so it changes exactly when what would be asked changes, with
// no counter to keep in step across tables.
func Version(decidingScope, decidingID, state string, p Policy) string {
	body, _ := json.Marshal(struct { // a struct of strings always marshals
		Scope string `json:"scope"`
		ID    string `json:"id"`
		State string `json:"state"`
		Rules []Rule `json:"rules"`
	}{decidingScope, decidingID, state, p.Rules})
	sum := sha256.Sum256(body)
	return "p1:" + hex.EncodeToString(sum[:12])
}

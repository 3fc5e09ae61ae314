package mcppool

import "maps"

// What a session declares of the platform's extensions (ADR 0627, amendment
// "declared where advertised"). A session of the handshake era declares them
// once, at initialize, and keeps declaring all of them. The 2026-07-28 wire
// repeats the client's capabilities in every request's _meta, and in that
// revision an extension is in use only when both sides list it in
// capabilities.extensions: a session there declares, after its server's
// discover answer, only the extensions that answer lists. Elicitation is not
// an extension and stays declared: every catalog row has a rule for forms
// (decline, defaults or a person), and a server may send one unannounced.

// declarations is a session's own copy of appCapability. mcp-go v1.2.1 keeps
// the map it is given at initialize as the client's extensions (it does not
// copy it), so keepAdvertised trims what every later request declares. Were a
// later mcp-go to copy it, the session would go on declaring every extension,
// as before (correct, only larger); TestExtensionsAreDeclaredWhereAdvertised
// would fail.
func declarations() map[string]any { return maps.Clone(appCapability) }

// keepAdvertised drops from declared every extension the server's
// capabilities.extensions (advertised) does not list.
func keepAdvertised(declared, advertised map[string]any) {
	for name := range declared {
		if _, ok := advertised[name]; !ok {
			delete(declared, name)
		}
	}
}

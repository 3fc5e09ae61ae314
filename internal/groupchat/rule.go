package groupchat

// The plain rule, used when the group-routing integration is off and as the
// fallback when its model fails:
//
//   - a message's @mentions of the guild's agents address those agents;
//   - an operator's message that addresses nobody goes to the guild's
//     designated responders (none by default);
//   - an agent's message that addresses nobody is answered by nobody;
//   - an agent never answers its own message.
//
// The hop bound (Decider.MaxHops) applies before either way of choosing.

// Rule returns the recipients the plain rule picks for m.
func Rule(m Message, agents []Agent) []Recipient {
	byID := map[string]Agent{}
	for _, a := range agents {
		byID[a.ID] = a
	}
	out := []Recipient{}
	seen := map[string]bool{}
	add := func(a Agent) {
		if seen[a.ID] || (m.Author.Kind == AuthorAgent && a.ID == m.Author.AgentID) {
			return
		}
		seen[a.ID] = true
		out = append(out, Recipient{AgentID: a.ID, Name: a.Name})
	}
	for _, mn := range m.Mentions {
		if a, ok := byID[mn.AgentID]; ok {
			add(a)
		}
	}
	if len(seen) > 0 || m.Author.Kind != AuthorUser {
		return out
	}
	for _, a := range agents {
		if a.Responder {
			add(a)
		}
	}
	return out
}

// Package groupchat owns a guild's group chat: one ordered, durable
// conversation of the guild's operators and agents (group_messages), the
// guild's designated responders, the routing decision of each message and
// the run each recipient was given. Routing itself (which agents answer and
// what history they see) is decided here too, by the plain rule or the
// group-routing integration's model; workflows/group drives it durably.
package groupchat

import (
	"encoding/json"
	"time"
)

// Authors of a message.
const (
	AuthorUser  = "user"
	AuthorAgent = "agent"
)

// MaxContent bounds a message, in characters.
const MaxContent = 8000

// DefaultMaxHops bounds a chain of agent messages that follows one operator
// message: an agent message DefaultMaxHops hops away is posted but routed to
// nobody, so two agents addressing each other stop.
const DefaultMaxHops = 4

// Author is who wrote a message.
type Author struct {
	Kind    string `json:"kind"` // "user" | "agent"
	UserID  string `json:"user_id,omitempty"`
	AgentID string `json:"agent_id,omitempty"`
	Name    string `json:"name"`
}

// Mention is one @name of a message, resolved against the guild's agents
// when it was posted; AgentID is empty when the name is no agent's.
type Mention struct {
	Name    string `json:"name"`
	AgentID string `json:"agent_id,omitempty"`
}

// Message is one entry of a guild's chat.
type Message struct {
	ID       string    `json:"id"`
	GuildID  string    `json:"guild_id"`
	Seq      int64     `json:"seq"`
	Author   Author    `json:"author"`
	Content  string    `json:"content"`
	Mentions []Mention `json:"mentions"`
	// RunID is the run that wrote an agent's message.
	RunID string `json:"run_id,omitempty"`
	// ParentID is the message whose run wrote this one; Hop counts the agent
	// messages from the operator message that started the chain (0 for an
	// operator's own).
	ParentID  string    `json:"parent_id,omitempty"`
	Hop       int       `json:"hop"`
	CreatedAt time.Time `json:"created_at"`
	// Route is the routing decision, once made.
	Route *Route `json:"route,omitempty"`
}

// UnknownMentions are the @names that named no agent.
func (m Message) UnknownMentions() []string {
	out := []string{}
	for _, mn := range m.Mentions {
		if mn.AgentID == "" {
			out = append(out, mn.Name)
		}
	}
	return out
}

// Routing methods.
const (
	MethodRouter   = "router"    // the group-routing model chose
	MethodFallback = "fallback"  // the model failed; the plain rule chose
	MethodRule     = "rule"      // group-routing is off; the plain rule chose
	MethodHopLimit = "hop_limit" // the chain reached its hop bound
)

// Recipient is an agent a message was routed to.
type Recipient struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
}

// Route is the routing decision of one message.
type Route struct {
	Method     string      `json:"method"`
	Recipients []Recipient `json:"recipients"`
	// History is how many chat messages, up to and including this one, each
	// recipient's run opens with.
	History   int       `json:"history"`
	Note      string    `json:"note,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func (r Route) recipientsJSON() []byte {
	raw, _ := json.Marshal(r.Recipients)
	return raw
}

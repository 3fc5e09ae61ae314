package groupchat

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/guilds/guilds/internal/store"
)

// Decider decides who answers a message: the hop bound first, then the
// group-routing model when Router is set (the plain rule when it fails),
// else the plain rule.
type Decider struct {
	Router  *Router // nil: the group-routing integration is off
	MaxHops int     // DefaultMaxHops when zero
	Limits  Limits  // the exchange's run budget and the guild's agent message rate
	Log     *slog.Logger
}

// Decide returns the routing decision of m within the Limits. It does not store it.
func (d Decider) Decide(ctx context.Context, db store.DB, m Message) (Route, error) {
	r, err := d.decide(ctx, db, m)
	if err != nil || r.Method == MethodHopLimit {
		return r, err
	}
	return d.limitRoute(ctx, db, m, r)
}

func (d Decider) decide(ctx context.Context, db store.DB, m Message) (Route, error) {
	maxHops := d.MaxHops
	if maxHops <= 0 {
		maxHops = DefaultMaxHops
	}
	if m.Author.Kind == AuthorAgent && m.Hop >= maxHops {
		return Route{Method: MethodHopLimit, Recipients: []Recipient{}, History: 0,
			Note: fmt.Sprintf("this agent message is %d hops from the operator message that started the exchange; "+
				"messages at %d hops or more are answered by nobody", m.Hop, maxHops)}, nil
	}
	agents, err := GuildAgents(ctx, db, m.GuildID)
	if err != nil {
		return Route{}, err
	}
	unknown := unknownNote(m)
	rule := func(method, why string) Route {
		r := Route{Method: method, Recipients: Rule(m, agents), History: DefaultHistory, Note: joinNotes(why, unknown)}
		if len(r.Recipients) == 0 {
			r.Note = joinNotes(r.Note, "nobody is addressed")
		}
		return r
	}
	if d.Router == nil {
		return rule(MethodRule, ""), nil
	}
	history, err := History(ctx, db, m.GuildID, m.Seq, routerContext)
	if err != nil {
		return Route{}, err
	}
	ans, err := d.Router.Decide(ctx, RouterInput{Agents: agents, History: history, Message: m})
	if err != nil && ctx.Err() != nil {
		// The caller is going away (a worker stopping): decide nothing,
		// so the retry asks the model again instead of storing a fallback.
		return Route{}, ctx.Err()
	}
	if err != nil {
		if d.Log != nil {
			d.Log.WarnContext(ctx, "group routing model failed; the plain rule routes the message", "message_id", m.ID, "err", err)
		}
		return rule(MethodFallback, "the routing model failed ("+err.Error()+"); the plain rule chose"), nil
	}
	return routed(m, agents, ans, unknown), nil
}

// routed turns the model's answer into a route: names that are no agent of
// the guild, and the author, are dropped; history is kept within bounds.
func routed(m Message, agents []Agent, ans RouterAnswer, unknown string) Route {
	byKey := map[string]Agent{}
	for _, a := range agents {
		byKey[mentionKey(a.Name)] = a
	}
	r := Route{Method: MethodRouter, Recipients: []Recipient{}, History: min(max(ans.History, 1), MaxHistory), Note: unknown}
	seen := map[string]bool{}
	var dropped []string
	for _, name := range ans.Recipients {
		a, ok := byKey[mentionKey(strings.TrimPrefix(name, "@"))]
		switch {
		case !ok:
			dropped = append(dropped, name)
		case seen[a.ID], m.Author.Kind == AuthorAgent && a.ID == m.Author.AgentID:
		default:
			seen[a.ID] = true
			r.Recipients = append(r.Recipients, Recipient{AgentID: a.ID, Name: a.Name})
		}
	}
	if len(dropped) > 0 {
		r.Note = joinNotes(r.Note, "the routing model named no agent of this guild as "+strings.Join(dropped, ", "))
	}
	if len(r.Recipients) == 0 {
		r.Note = joinNotes(r.Note, "nobody is addressed")
	}
	return r
}

func unknownNote(m Message) string {
	unknown := m.UnknownMentions()
	if len(unknown) == 0 {
		return ""
	}
	return "@" + strings.Join(unknown, ", @") + " names no agent of this guild"
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

package groupchat

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Past the guild's agent message rate, an agent's message is stored but
// answered by nobody, and its route names the setting; an operator's
// message is routed whatever the agents posted.
func TestAgentMessagesPastTheGuildsRateAreNotRouted(t *testing.T) {
	t.Parallel()
	db, guild, agents := fixture(t)
	ctx := context.Background()
	d := Decider{Limits: Limits{AgentMessagesPerMinute: 2, Window: time.Hour}}
	var last Message
	for range 3 {
		last, _ = post(t, db, NewMessage{GuildID: guild, Author: Author{Kind: AuthorAgent, AgentID: agents["alice"]},
			Content: "@bob again", Hop: 1})
	}
	r, err := d.Decide(ctx, db, last)
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != MethodRateLimit || len(r.Recipients) != 0 || !strings.Contains(r.Note, "GUILDS_GROUP_AGENT_MESSAGES_PER_MINUTE") {
		t.Fatalf("third agent message: %+v", r)
	}
	op, _ := post(t, db, NewMessage{GuildID: guild, Author: Author{Kind: AuthorUser}, Content: "@bob you there?"})
	if r, err := d.Decide(ctx, db, op); err != nil || r.Method != MethodRule || len(r.Recipients) != 1 {
		t.Fatalf("operator message: %+v %v", r, err)
	}
	// A reply belongs to its parent's exchange.
	reply, _ := post(t, db, NewMessage{GuildID: guild, Author: Author{Kind: AuthorAgent, AgentID: agents["bob"]},
		Content: "yes", ParentID: op.ID, Hop: 1})
	var root string
	if err := db.QueryRow(ctx, `SELECT root_id::text FROM group_messages WHERE id = $1`, reply.ID).Scan(&root); err != nil || root != op.ID {
		t.Fatalf("the reply's exchange is %q (%v), want %s", root, err, op.ID)
	}
}

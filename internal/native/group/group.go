// Package group is the group_post tool: an agent posts a message into its
// guild's group chat. The message goes through the run's redaction set
// before it is stored, as a tool result does, so no credential can be
// laundered into the chat; an @mention in it addresses another agent.
package group

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// ToolName is the model-facing name of the tool.
const ToolName = "group_post"

// Poster posts an agent's message and starts its routing
// (workflows/group.Service).
type Poster interface {
	PostAgent(ctx context.Context, in groupchat.NewMessage) (groupchat.Message, error)
}

// SecretSource gives the run's redaction set: the same sources the run
// activities redact tool results with.
type SecretSource interface {
	RunSecrets(ctx context.Context, agentID string) ([]string, error)
}

// Deps are what the tool needs. Without a Poster (a process with no
// Temporal) the tool is declared and a call says why it cannot post.
type Deps struct {
	DB      store.DB
	Poster  Poster
	Secrets SecretSource
	Limits  groupchat.Limits // posts per run and the guild's agent message rate
	Log     *slog.Logger
}

// ErrNoPoster is the result of a call in a process that cannot route.
var ErrNoPoster = errors.New("the group chat is not available in this process: it has no Temporal connection")

var schema = json.RawMessage(`{"type":"object","properties":{
	"message":{"type":"string","description":"the message, at most 8000 characters; mention an agent as @name to ask it something"}},
	"required":["message"],"additionalProperties":false}`)

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "group", Group: "Group chat", Gate: tools.GateBinding}

// Register adds group_post to reg.
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	fam.Register(tools.Tool{
		Name: ToolName,
		Description: "Post a message into your guild's group chat, where its operators and agents read it. " +
			"An @name of another agent asks that agent to answer. Your final answer in a group-chat run is posted for you; " +
			"use this to say something before it, or to address someone else.",
		Schema: schema,
		// Keyed by the call's run and seq: a retry finds the message it posted.
		Idempotent: true,
		Handler:    d.post,
	})
}

func (d Deps) post(ctx context.Context, call tools.Call) (string, error) {
	if call.RunID == "" || call.AgentID == "" || call.GuildID == "" {
		return "", errors.New("group_post needs a run of an agent in a guild")
	}
	if d.Poster == nil || d.DB == nil {
		return "", ErrNoPoster
	}
	var in struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", fmt.Errorf("arguments: %w", err)
	}
	text, err := d.redact(ctx, call.AgentID, in.Message)
	if err != nil {
		return "", err
	}
	if text, err = groupchat.CheckContent("message", text); err != nil {
		return "", err
	}
	post := groupchat.NewMessage{GuildID: call.GuildID, Author: groupchat.Author{Kind: groupchat.AuthorAgent, AgentID: call.AgentID},
		Content: text, RunID: call.RunID, Hop: 1, PostKey: fmt.Sprintf("run:%s:call:%d", call.RunID, call.Seq)}
	if err := d.withinLimits(ctx, call, post.PostKey); err != nil {
		return "", err
	}
	// A group-triggered run posts one hop further from the operator than
	// the message it answers; any other run starts an exchange of its own.
	if del, err := groupchat.DeliveryOfRun(ctx, d.DB, call.RunID); err == nil {
		parent, err := groupchat.Get(ctx, d.DB, del.MessageID)
		if err != nil {
			return "", err
		}
		post.ParentID, post.Hop = parent.ID, parent.Hop+1
	} else if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	m, err := d.Poster.PostAgent(ctx, post)
	if err != nil {
		return "", err
	}
	return describe(m), nil
}

// withinLimits refuses a post past the run's group_post cap or the guild's
// agent message rate; a retried call whose message is stored passes.
func (d Deps) withinLimits(ctx context.Context, call tools.Call, key string) error {
	if done, err := groupchat.Posted(ctx, d.DB, key); err != nil || done {
		return err
	}
	lim := d.Limits.WithDefaults()
	n, err := groupchat.RunPosts(ctx, d.DB, call.RunID, key)
	if err != nil {
		return err
	}
	if n >= lim.PostsPerRun {
		return fmt.Errorf("this run has posted %d messages with group_post, the most one run may (GUILDS_GROUP_POSTS_PER_RUN): "+
			"put what is left in your final answer", n)
	}
	if n, err = groupchat.RecentAgentMessages(ctx, d.DB, call.GuildID, lim.Window, key); err != nil {
		return err
	}
	if n >= lim.AgentMessagesPerMinute {
		return fmt.Errorf("the guild's agents posted %d messages within %s, the most allowed (GUILDS_GROUP_AGENT_MESSAGES_PER_MINUTE): "+
			"post later or put it in your final answer", n, lim.Window)
	}
	return nil
}

func (d Deps) redact(ctx context.Context, agentID, text string) (string, error) {
	if d.Secrets == nil {
		return text, nil
	}
	secrets, err := d.Secrets.RunSecrets(ctx, agentID)
	if err != nil {
		return "", fmt.Errorf("load the run's redaction set: %w", err)
	}
	return tools.NewRedactor(secrets, d.Log).Redact(text), nil
}

// describe is the tool's result: where the message went and whom it names.
func describe(m groupchat.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "posted message #%d into the guild chat", m.Seq)
	var known []string
	for _, mn := range m.Mentions {
		if mn.AgentID != "" {
			known = append(known, "@"+mn.Name)
		}
	}
	if len(known) > 0 {
		fmt.Fprintf(&b, "; it mentions %s", strings.Join(known, ", "))
	}
	if unknown := m.UnknownMentions(); len(unknown) > 0 {
		fmt.Fprintf(&b, "; @%s names no agent of this guild, so nobody is addressed by it", strings.Join(unknown, ", @"))
	}
	return b.String()
}

package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	groupwf "github.com/guilds/guilds/workflows/group"
)

func (s *Server) groupChatRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/guilds/:id/chat/messages", Tag: "group chat",
			Summary: "Read a guild's group chat, oldest first: the newest page, ?before=seq for older ones, ?after=seq for newer ones (?limit, at most 200)",
			Reply:   chatPage{}, Handle: listChatMessages},
		{Method: "POST", Path: "/api/guilds/:id/chat/messages", Tag: "group chat",
			Summary: "Post an operator's message into a guild's group chat; its routing starts at once",
			Body:    chatPostInput{}, Reply: chatPosted{}, Status: http.StatusCreated, Handle: s.postChatMessage},
		{Method: "GET", Path: "/api/guilds/:id/chat/events", Tag: "group chat",
			Summary: "Stream a guild's chat messages as server-sent events (?after=seq or Last-Event-ID)", Raw: s.chatEvents},
		{Method: "GET", Path: "/api/guilds/:id/chat/responders", Tag: "group chat",
			Summary: "List a guild's agents with whether each answers operator messages that @mention nobody",
			Reply:   []groupchat.Agent{}, Handle: listChatResponders},
		{Method: "PUT", Path: "/api/guilds/:id/chat/responders", Tag: "group chat",
			Summary: "Set the agents that answer operator messages that @mention nobody",
			Body:    respondersInput{}, Reply: []groupchat.Agent{}, Handle: putChatResponders},
	}
}

type chatPage struct {
	Messages []groupchat.Message `json:"messages"`
	// HasMore: more messages lie beyond this page in its direction (older
	// for the newest page and ?before, newer for ?after).
	HasMore bool `json:"has_more"`
}

type chatPostInput struct {
	Message string `json:"message"` // at most 8000 characters; @name addresses an agent
}

type chatPosted struct {
	Message groupchat.Message `json:"message"`
	// Routing is "rule" (group-routing is off: Addressed is who answers) or
	// "router" (the routing model decides; see the message's route).
	Routing         string   `json:"routing"`
	Addressed       []string `json:"addressed,omitempty"`
	UnknownMentions []string `json:"unknown_mentions"`
	Notice          string   `json:"notice,omitempty"`
}

type respondersInput struct {
	AgentIDs []string `json:"agent_ids"`
}

func pageParam(c *gin.Context, name string) (int64, error) {
	v := c.Query(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, invalidField(name, "must be a message seq (a whole number, 0 or more)")
	}
	return n, nil
}

func listChatMessages(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	g, err := orgs.GetGuild(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	var page groupchat.Page
	if page.After, err = pageParam(c, "after"); err != nil {
		return 0, nil, err
	}
	if page.Before, err = pageParam(c, "before"); err != nil {
		return 0, nil, err
	}
	if page.After > 0 && page.Before > 0 {
		return 0, nil, invalidField("before", "cannot be combined with after: page one way at a time")
	}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > groupchat.MaxLimit {
			return 0, nil, invalidField("limit", fmt.Sprintf("must be a number from 1 to %d", groupchat.MaxLimit))
		}
		page.Limit = n
	}
	msgs, more, err := groupchat.List(ctx, db, g.ID, page)
	return http.StatusOK, chatPage{Messages: msgs, HasMore: more}, err
}

func (s *Server) postChatMessage(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	// The guild first: another organisation's guild is 404 whatever the body.
	g, err := orgs.GetGuild(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	var in chatPostInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if _, err := groupchat.CheckContent("message", in.Message); err != nil {
		return 0, nil, err
	}
	tx, ok := db.(pgx.Tx)
	if !ok {
		return 0, nil, errors.New("posting a chat message needs the request's transaction")
	}
	if s.Temporal == nil {
		return 0, nil, errNoTemporal()
	}
	svc := groupwf.Service{Temporal: s.Temporal, TaskQueue: s.RunTaskQueue}
	m, err := svc.PostOperator(ctx, tx, g.ID, p.UserID, in.Message)
	if err != nil {
		return 0, nil, err
	}
	out := chatPosted{Message: m, Routing: groupchat.MethodRouter, UnknownMentions: m.UnknownMentions()}
	if len(out.UnknownMentions) > 0 {
		out.Notice = fmt.Sprintf("@%s names no agent of this guild: nobody is addressed by it", joinNames(out.UnknownMentions))
	}
	if !s.Integrations.On(groupchat.Integration) {
		agents, err := groupchat.GuildAgents(ctx, db, g.ID)
		if err != nil {
			return 0, nil, err
		}
		out.Routing, out.Addressed = groupchat.MethodRule, []string{}
		for _, r := range groupchat.Rule(m, agents) {
			out.Addressed = append(out.Addressed, r.Name)
		}
		if len(out.Addressed) == 0 {
			out.Notice = joinNotice(out.Notice, "no agent is addressed: mention one as @name, or set the guild's responders")
		}
	}
	return http.StatusCreated, out, nil
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", @"
		}
		out += n
	}
	return out
}

func joinNotice(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func listChatResponders(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	g, err := orgs.GetGuild(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := groupchat.GuildAgents(ctx, db, g.ID)
	return http.StatusOK, out, err
}

func putChatResponders(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	g, err := orgs.GetGuild(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	var in respondersInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	tx, ok := db.(pgx.Tx)
	if !ok {
		return 0, nil, errors.New("setting responders needs the request's transaction")
	}
	if err := groupchat.SetResponders(ctx, tx, g.ID, in.AgentIDs); err != nil {
		return 0, nil, err
	}
	out, err := groupchat.GuildAgents(ctx, db, g.ID)
	return http.StatusOK, out, err
}

// chatListeners holds one chat listener per pool; each listens only while
// someone follows a chat, so it needs no start or stop of its own.
var chatListeners sync.Map // *pgxpool.Pool → *groupchat.Listener

func (s *Server) chatListener() *groupchat.Listener {
	if s.DB == nil {
		return nil
	}
	if l, ok := chatListeners.Load(s.DB); ok {
		return l.(*groupchat.Listener)
	}
	l, _ := chatListeners.LoadOrStore(s.DB, groupchat.NewListener(s.DB.Config().ConnConfig.Copy(), s.Log))
	return l.(*groupchat.Listener)
}

// chatEvents streams a guild's chat as server-sent events: one "message"
// event per message, id its seq, in seq order, from ?after (or the
// Last-Event-ID a reconnecting EventSource sends; 0: the start) for as long
// as the client stays.
func (s *Server) chatEvents(c *gin.Context) {
	p := c.MustGet(principalKey).(access.Principal)
	ctx := c.Request.Context()
	g, err := orgs.GetGuild(ctx, s.db(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	var after int64
	v, field := c.Query("after"), "after"
	if v == "" {
		v, field = c.GetHeader("Last-Event-ID"), "Last-Event-ID"
	}
	if v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			s.fail(c, invalidField(field, "must be a message seq"))
			return
		}
	}
	_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Time{})
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	err = groupchat.Follow(ctx, s.db(), g.ID, after, s.chatListener(), func(m groupchat.Message) error {
		data, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "id: %d\nevent: message\ndata: %s\n\n", m.Seq, data); err != nil {
			return err
		}
		w.Flush()
		return nil
	})
	if err != nil && ctx.Err() == nil {
		s.Log.Warn("chat event stream ended", "guild_id", g.ID, "err", err)
	}
}

package groupchat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Agent is an agent of a guild as routing sees it.
type Agent struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Prompt string `json:"-"`
	// Responder: the agent answers operator messages no @mention addresses.
	Responder bool `json:"responder"`
}

// GuildAgents lists a guild's agents by name, with their responder flag.
func GuildAgents(ctx context.Context, db store.DB, guildID string) ([]Agent, error) {
	rows, err := db.Query(ctx, `SELECT a.id, a.name, a.prompt, r.agent_id IS NOT NULL
		FROM agents a LEFT JOIN group_responders r ON r.agent_id = a.id AND r.guild_id = a.guild_id
		WHERE a.guild_id = $1 ORDER BY a.name, a.id`, guildID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Agent{}
	for rows.Next() {
		var a Agent
		if err := rows.Scan(&a.ID, &a.Name, &a.Prompt, &a.Responder); err != nil {
			return nil, store.Map(err)
		}
		out = append(out, a)
	}
	return out, store.Map(rows.Err())
}

// NewMessage is what Post stores.
type NewMessage struct {
	GuildID  string
	Author   Author // Kind and UserID or AgentID; Name is looked up
	Content  string
	RunID    string
	ParentID string
	Hop      int
	// PostKey makes the post idempotent: a retried writer (the final answer
	// of a run, a group_post call) gets the message it already stored.
	PostKey string
}

// CheckContent trims a message and refuses an empty, oversize or non-text
// one, naming field.
func CheckContent(field, content string) (string, error) {
	content = strings.TrimSpace(content)
	var probs validation.Problems
	probs.Check(content != "", field, "is required: write the message to post")
	probs.Check(utf8.ValidString(content), field, "must be UTF-8 text")
	if n := utf8.RuneCountInString(content); n > MaxContent {
		probs.Add(field, "must be at most %d characters (it has %d)", MaxContent, n)
	}
	return content, probs.Err()
}

// Post stores a message at the guild's next seq. It must run in a
// transaction: the guild's head row stays locked until commit, so seq order
// is commit order. created is false when PostKey found an earlier post.
func Post(ctx context.Context, tx pgx.Tx, in NewMessage) (m Message, created bool, err error) {
	if in.PostKey != "" {
		if m, err := byPostKey(ctx, tx, in.PostKey); err == nil {
			return m, false, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return Message{}, false, err
		}
	}
	content, err := CheckContent("message", in.Content)
	if err != nil {
		return Message{}, false, err
	}
	name, err := authorName(ctx, tx, in.GuildID, in.Author)
	if err != nil {
		return Message{}, false, err
	}
	agents, err := GuildAgents(ctx, tx, in.GuildID)
	if err != nil {
		return Message{}, false, err
	}
	mentions, _ := json.Marshal(resolveMentions(content, agents))
	var seq int64
	if err := tx.QueryRow(ctx, `INSERT INTO group_chat_heads (guild_id, last_seq) VALUES ($1, 1)
		ON CONFLICT (guild_id) DO UPDATE SET last_seq = group_chat_heads.last_seq + 1 RETURNING last_seq`,
		in.GuildID).Scan(&seq); err != nil {
		return Message{}, false, store.Map(err)
	}
	root, err := rootOf(ctx, tx, in.ParentID)
	if err != nil {
		return Message{}, false, err
	}
	row := tx.QueryRow(ctx, `INSERT INTO group_messages (guild_id, seq, author_kind, author_user_id, author_agent_id,
			author_name, content, mentions, run_id, parent_id, hop, post_key, root_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING `+messageCols,
		in.GuildID, seq, in.Author.Kind, nullable(in.Author.UserID), nullable(in.Author.AgentID), name, content, mentions,
		nullable(in.RunID), nullable(in.ParentID), in.Hop, nullable(in.PostKey), root)
	m, err = scanMessage(row)
	return m, err == nil, err
}

func authorName(ctx context.Context, db store.DB, guildID string, a Author) (string, error) {
	var name string
	switch a.Kind {
	case AuthorUser:
		if a.UserID == "" {
			return "operator", nil
		}
		err := db.QueryRow(ctx, `SELECT name FROM users WHERE id = $1`, a.UserID).Scan(&name)
		return name, store.Map(err)
	case AuthorAgent:
		err := db.QueryRow(ctx, `SELECT name FROM agents WHERE id = $1 AND guild_id = $2`, a.AgentID, guildID).Scan(&name)
		if errors.Is(store.Map(err), store.ErrNotFound) {
			return "", fmt.Errorf("agent %s is not in guild %s: %w", a.AgentID, guildID, store.ErrNotFound)
		}
		return name, store.Map(err)
	}
	return "", fmt.Errorf("author kind %q is neither user nor agent", a.Kind)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

const messageCols = `id, guild_id, seq, author_kind, coalesce(author_user_id::text, ''), coalesce(author_agent_id::text, ''),
	author_name, content, mentions, coalesce(run_id::text, ''), coalesce(parent_id::text, ''), hop, created_at`

func scanMessage(row interface{ Scan(...any) error }) (Message, error) {
	var m Message
	var mentions []byte
	err := row.Scan(&m.ID, &m.GuildID, &m.Seq, &m.Author.Kind, &m.Author.UserID, &m.Author.AgentID, &m.Author.Name,
		&m.Content, &mentions, &m.RunID, &m.ParentID, &m.Hop, &m.CreatedAt)
	if err != nil {
		return Message{}, store.Map(err)
	}
	m.Mentions = []Mention{}
	if len(mentions) > 0 {
		if err := json.Unmarshal(mentions, &m.Mentions); err != nil {
			return Message{}, err
		}
	}
	return m, nil
}

func byPostKey(ctx context.Context, db store.DB, key string) (Message, error) {
	return scanMessage(db.QueryRow(ctx, `SELECT `+messageCols+` FROM group_messages WHERE post_key = $1`, key))
}

// Get returns one message with its route, when decided.
func Get(ctx context.Context, db store.DB, id string) (Message, error) {
	m, err := scanMessage(db.QueryRow(ctx, `SELECT `+messageCols+` FROM group_messages WHERE id = $1`, id))
	if err != nil {
		return Message{}, err
	}
	if err := attachRoutes(ctx, db, []*Message{&m}); err != nil {
		return Message{}, err
	}
	return m, nil
}

// Page selects messages of a guild. With After, the messages after that seq,
// oldest first; otherwise the newest ones before Before (0: the end), still
// returned oldest first.
type Page struct {
	After  int64
	Before int64
	Limit  int // default 50, at most 200
}

// Default and largest page sizes.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// List returns a page of a guild's messages in seq order and whether more
// lie beyond it in the page's direction.
func List(ctx context.Context, db store.DB, guildID string, p Page) ([]Message, bool, error) {
	if p.Limit <= 0 {
		p.Limit = DefaultLimit
	}
	p.Limit = min(p.Limit, MaxLimit)
	var sql string
	args := []any{guildID, p.Limit + 1}
	switch {
	case p.After > 0:
		sql = `SELECT ` + messageCols + ` FROM group_messages WHERE guild_id = $1 AND seq > $3 ORDER BY seq LIMIT $2`
		args = append(args, max(p.After, 0))
	case p.Before > 0:
		sql = `SELECT ` + messageCols + ` FROM group_messages WHERE guild_id = $1 AND seq < $3 ORDER BY seq DESC LIMIT $2`
		args = append(args, p.Before)
	default:
		sql = `SELECT ` + messageCols + ` FROM group_messages WHERE guild_id = $1 ORDER BY seq DESC LIMIT $2`
	}
	out, err := query(ctx, db, sql, args...)
	if err != nil {
		return nil, false, err
	}
	more := len(out) > p.Limit
	if more {
		out = out[:p.Limit]
	}
	if p.After <= 0 {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	ptrs := make([]*Message, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, more, attachRoutes(ctx, db, ptrs)
}

// Since returns the messages of a guild after seq, oldest first (the event stream).
func Since(ctx context.Context, db store.DB, guildID string, after int64, limit int) ([]Message, error) {
	if limit <= 0 || limit > MaxLimit {
		limit = MaxLimit
	}
	return query(ctx, db, `SELECT `+messageCols+` FROM group_messages WHERE guild_id = $1 AND seq > $2
		ORDER BY seq LIMIT $3`, guildID, max(after, 0), limit)
}

// History returns the n messages of a guild up to and including seq, oldest first.
func History(ctx context.Context, db store.DB, guildID string, seq int64, n int) ([]Message, error) {
	out, err := query(ctx, db, `SELECT `+messageCols+` FROM group_messages WHERE guild_id = $1 AND seq <= $2
		ORDER BY seq DESC LIMIT $3`, guildID, seq, max(n, 1))
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

func query(ctx context.Context, db store.DB, sql string, args ...any) ([]Message, error) {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, store.Map(rows.Err())
}

// Package notes is the note tool family: Markdown notes an agent keeps at
// its own level, its guild's or its organisation's, stored as artifacts of
// kind note. Reach to guild and organisation notes follows the agent's
// artifact grants (ReachFunc).
package notes

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
)

// Scope is the agent a note call acts for, with what it may reach.
type Scope struct {
	Agent orgs.Agent
	Reach Reach
}

// ScopeFor loads the agent and its reach.
func ScopeFor(ctx context.Context, db store.DB, reach ReachFunc, agentID string) (Scope, error) {
	if agentID == "" {
		return Scope{}, errors.New("note tools need an agent: this call has no agent id")
	}
	a, err := orgs.LoadAgent(ctx, db, agentID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Scope{}, artifacts.Errorf(http.StatusNotFound, "agent %s not found", agentID)
		}
		return Scope{}, err
	}
	if reach == nil {
		reach = DefaultReachFunc
	}
	r, err := reach(ctx, db, agentID)
	if err != nil {
		return Scope{}, err
	}
	return Scope{Agent: a, Reach: r}, nil
}

// Owner is the artifact owner of a level for this agent.
func (s Scope) Owner(level artifacts.Scope) artifacts.Owner {
	o := artifacts.Owner{Scope: level, OrgID: s.Agent.OrganisationID}
	switch level {
	case artifacts.ScopeAgent:
		o.ID = s.Agent.ID
	case artifacts.ScopeGuild:
		o.ID = s.Agent.GuildID
	case artifacts.ScopeOrg:
		o.ID = s.Agent.OrganisationID
	}
	return o
}

func levelName(l artifacts.Scope) string {
	switch l {
	case artifacts.ScopeGuild:
		return "guild"
	case artifacts.ScopeOrg:
		return "organisation"
	}
	return "agent"
}

// CanRead reports whether the agent may read notes of level.
func (s Scope) CanRead(l artifacts.Scope) bool {
	switch l {
	case artifacts.ScopeAgent:
		return true
	case artifacts.ScopeGuild:
		return s.Reach.ReadGuild
	case artifacts.ScopeOrg:
		return s.Reach.ReadOrg
	}
	return false
}

// CanWrite reports whether the agent may write notes of level.
func (s Scope) CanWrite(l artifacts.Scope) bool {
	switch l {
	case artifacts.ScopeAgent:
		return true
	case artifacts.ScopeGuild:
		return s.Reach.WriteGuild
	case artifacts.ScopeOrg:
		return s.Reach.WriteOrg
	}
	return false
}

func (s Scope) mustRead(l artifacts.Scope) error {
	if !s.CanRead(l) {
		return artifacts.Errorf(http.StatusForbidden, "this agent is not granted reading %s notes", levelName(l))
	}
	return nil
}

func (s Scope) mustWrite(l artifacts.Scope) error {
	if !s.CanWrite(l) {
		return artifacts.Errorf(http.StatusForbidden, "this agent is not granted writing %s notes", levelName(l))
	}
	return nil
}

// Readable lists the owners whose notes the agent may read, narrowed to one
// level when level is not empty.
func (s Scope) Readable(level artifacts.Scope) ([]artifacts.Owner, error) {
	if level != "" {
		if err := s.mustRead(level); err != nil {
			return nil, err
		}
		return []artifacts.Owner{s.Owner(level)}, nil
	}
	var out []artifacts.Owner
	for _, l := range []artifacts.Scope{artifacts.ScopeAgent, artifacts.ScopeGuild, artifacts.ScopeOrg} {
		if s.CanRead(l) {
			out = append(out, s.Owner(l))
		}
	}
	return out, nil
}

// Find lists or searches the notes the agent may read.
func (s Scope) Find(ctx context.Context, db store.DB, level artifacts.Scope, query string, limit int) ([]artifacts.Artifact, error) {
	owners, err := s.Readable(level)
	if err != nil {
		return nil, err
	}
	return artifacts.List(ctx, db, artifacts.KindNote, owners, artifacts.Filter{Words: Words(query), Limit: limit})
}

// Get reads one note.
func (s Scope) Get(ctx context.Context, db store.DB, level artifacts.Scope, key string) (artifacts.Artifact, error) {
	if err := s.mustRead(level); err != nil {
		return artifacts.Artifact{}, err
	}
	a, err := artifacts.Get(ctx, db, artifacts.KindNote, s.Owner(level), key)
	if errors.Is(err, store.ErrNotFound) {
		return a, artifacts.Errorf(http.StatusNotFound, "note %s not found", Path(level, key))
	}
	return a, err
}

// Write creates or replaces one note and reports whether it was created.
func (s Scope) Write(ctx context.Context, db store.DB, level artifacts.Scope, key, content string) (artifacts.Artifact, bool, error) {
	if err := CheckKey(key); err != nil {
		return artifacts.Artifact{}, false, artifacts.OnField("key", "%v", err)
	}
	if err := CheckContent(content); err != nil {
		return artifacts.Artifact{}, false, err
	}
	if err := s.mustWrite(level); err != nil {
		return artifacts.Artifact{}, false, err
	}
	return artifacts.Put(ctx, db, artifacts.KindNote, s.Owner(level), key, content)
}

// Delete removes one note.
func (s Scope) Delete(ctx context.Context, db store.DB, level artifacts.Scope, key string) error {
	if err := s.mustWrite(level); err != nil {
		return err
	}
	err := artifacts.Delete(ctx, db, artifacts.KindNote, s.Owner(level), key)
	if errors.Is(err, store.ErrNotFound) {
		return artifacts.Errorf(http.StatusNotFound, "note %s not found", Path(level, key))
	}
	return err
}

// CheckContent refuses a note larger than MaxContent.
func CheckContent(content string) error {
	if len(content) > MaxContent {
		return artifacts.OnField("content", "note content is %d bytes; at most %d are kept", len(content), MaxContent)
	}
	return nil
}

// Words splits a search query into the words a note must all contain.
func Words(q string) []string {
	f := strings.FieldsFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
	if len(f) > 16 {
		f = f[:16]
	}
	return f
}

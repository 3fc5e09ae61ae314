package notes

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/tools"
)

// Deps are what the note tools need.
type Deps struct {
	DB    *pgxpool.Pool
	Log   *slog.Logger
	Reach ReachFunc // nil means DefaultReachFunc
}

// Tool names.
const (
	ToolFind   = "note_find"
	ToolGet    = "note_get"
	ToolWrite  = "note_write"
	ToolDelete = "note_delete"
)

// Names lists the note tools.
var Names = []string{ToolFind, ToolGet, ToolWrite, ToolDelete}

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "notes", Group: "Notes", Gate: tools.GateBinding}

// Register adds the four note tools to reg.
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	h := &handlers{d: d}
	fam.Register(tools.Tool{
		Name: ToolFind,
		Description: "List or search the Markdown notes you may read: your own (agent/), your guild's (guild/) and your organisation's (org/). " +
			"With query, only notes whose name or text contain every word are returned, with a snippet. Read one with note_get.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"query":{"type":"string","description":"words that must all appear in the note's name or text"},
			"level":{"type":"string","enum":["agent","guild","org"],"description":"only notes of this level"}},
			"additionalProperties":false}`),
		Handler:    h.find,
		Idempotent: true, Quick: true,
	})
	fam.Register(tools.Tool{
		Name:        ToolGet,
		Description: "Read one note by its path, e.g. agent/todo.md, guild/plan.md or org/handbook.md.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"level/key, e.g. guild/plan.md"}},
			"required":["path"],"additionalProperties":false}`),
		Handler:    h.get,
		Idempotent: true, Quick: true,
	})
	fam.Register(tools.Tool{
		Name: ToolWrite,
		Description: "Create or replace a Markdown note. level is agent (yours), guild or org; key is the file name ending in .md " +
			"(no folders). The content replaces the whole note.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"level":{"type":"string","enum":["agent","guild","org"]},
			"key":{"type":"string","description":"file name ending in .md, e.g. todo.md"},
			"content":{"type":"string","description":"the whole Markdown text"}},
			"required":["level","key","content"],"additionalProperties":false}`),
		Handler:    h.write,
		Idempotent: true, Quick: true,
	})
	fam.Register(tools.Tool{
		Name:        ToolDelete,
		Description: "Delete one note by its path, e.g. agent/old.md.",
		Schema: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"level/key, e.g. agent/old.md"}},
			"required":["path"],"additionalProperties":false}`),
		Handler: h.delete,
	})
}

type handlers struct{ d Deps }

func (h *handlers) scope(ctx context.Context, call tools.Call) (Scope, error) {
	return ScopeFor(ctx, h.d.DB, h.d.Reach, call.AgentID)
}

type noteEntry struct {
	Path      string    `json:"path"`
	Size      int       `json:"size"`
	UpdatedAt time.Time `json:"updated_at"`
	Snippet   string    `json:"snippet,omitempty"`
}

func (h *handlers) find(ctx context.Context, call tools.Call) (string, error) {
	var in struct {
		Query string `json:"query"`
		Level string `json:"level"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", err
	}
	s, err := h.scope(ctx, call)
	if err != nil {
		return "", err
	}
	// One more than shown, to tell the model when the list was cut.
	found, err := s.Find(ctx, h.d.DB, artifacts.Scope(in.Level), in.Query, findLimit+1)
	if err != nil {
		return "", err
	}
	cut := len(found) > findLimit
	if cut {
		found = found[:findLimit]
	}
	words := Words(in.Query)
	out := make([]noteEntry, len(found))
	for i, a := range found {
		out[i] = noteEntry{Path: Path(a.Scope, a.Key), Size: a.Size, UpdatedAt: a.UpdatedAt.UTC()}
		if len(words) > 0 {
			out[i].Snippet = snippet(a.Content, words[0])
		}
	}
	reply := map[string]any{"notes": out}
	if cut {
		reply["truncated"] = fmt.Sprintf("only the first %d matches are listed; narrow the query or pick a level", findLimit)
	}
	b, err := json.Marshal(reply)
	return string(b), err
}

// findLimit is how many notes note_find lists at most.
const findLimit = 100

// pathCall reads the display path of a note_get or note_delete call and the
// calling agent's reach.
func (h *handlers) pathCall(ctx context.Context, call tools.Call) (s Scope, level artifacts.Scope, key string, err error) {
	var in struct {
		Path string `json:"path"`
	}
	if err = json.Unmarshal(call.Args, &in); err != nil {
		return s, "", "", err
	}
	if level, key, err = ParsePath(in.Path); err != nil {
		return s, "", "", artifacts.Errorf(422, "%v", err)
	}
	s, err = h.scope(ctx, call)
	return s, level, key, err
}

func (h *handlers) get(ctx context.Context, call tools.Call) (string, error) {
	s, level, key, err := h.pathCall(ctx, call)
	if err != nil {
		return "", err
	}
	a, err := s.Get(ctx, h.d.DB, level, key)
	if err != nil {
		return "", err
	}
	if a.Content == "" {
		return "(" + Path(level, key) + " is empty)", nil
	}
	return a.Content, nil
}

func (h *handlers) write(ctx context.Context, call tools.Call) (string, error) {
	var in struct {
		Level   string `json:"level"`
		Key     string `json:"key"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", err
	}
	s, err := h.scope(ctx, call)
	if err != nil {
		return "", err
	}
	a, created, err := s.Write(ctx, h.d.DB, artifacts.Scope(in.Level), in.Key, in.Content)
	if err != nil {
		return "", err
	}
	verb := "replaced"
	if created {
		verb = "created"
	}
	return fmt.Sprintf("%s %s (%d bytes)", verb, Path(a.Scope, a.Key), a.Size), nil
}

func (h *handlers) delete(ctx context.Context, call tools.Call) (string, error) {
	s, level, key, err := h.pathCall(ctx, call)
	if err != nil {
		return "", err
	}
	if err := s.Delete(ctx, h.d.DB, level, key); err != nil {
		return "", err
	}
	return "deleted " + Path(level, key), nil
}

// snippet returns up to about 160 bytes of content around the first match of word.
func snippet(content, word string) string {
	i := strings.Index(strings.ToLower(content), strings.ToLower(word))
	if i < 0 {
		i = 0
	}
	start, end := max(0, i-60), min(len(content), i+100)
	for start > 0 && !utf8RuneStart(content[start]) {
		start--
	}
	for end < len(content) && !utf8RuneStart(content[end]) {
		end++
	}
	s := strings.Join(strings.Fields(content[start:end]), " ")
	if start > 0 {
		s = "…" + s
	}
	if end < len(content) {
		s += "…"
	}
	return s
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

package runs

import (
	"context"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
)

// Transcript is a run with everything that happened in it.
type Transcript struct {
	Run       Run        `json:"run"`
	Tools     []string   `json:"offered_tools"`
	Warnings  []string   `json:"warnings"`
	Messages  []Message  `json:"messages"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

// GetTranscript returns the transcript of a run the principal may see.
func GetTranscript(ctx context.Context, db store.DB, p access.Principal, id string) (Transcript, error) {
	r, err := Get(ctx, db, p, id)
	if err != nil {
		return Transcript{}, err
	}
	t := Transcript{Run: r, Tools: []string{}, Warnings: []string{}}
	if s, err := SnapshotOf(ctx, db, id); err == nil {
		for _, tool := range s.Tools {
			t.Tools = append(t.Tools, tool.Name)
		}
		t.Warnings = s.Warnings
	} else if err != store.ErrNotFound {
		return Transcript{}, err
	}
	if t.Messages, err = Messages(ctx, db, id, 0); err != nil {
		return Transcript{}, err
	}
	if t.ToolCalls, err = ToolCalls(ctx, db, id); err != nil {
		return Transcript{}, err
	}
	return t, nil
}

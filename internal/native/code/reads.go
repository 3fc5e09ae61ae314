package code

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
)

// priorReads returns what this run's earlier successful file_read calls
// returned, from their stored metadata, so the helper can answer a repeated
// read with one line. A read that was itself a repeat returned no content
// and is left out: the helper then points at the read that did.
func priorReads(ctx context.Context, db store.DB, runID string, seq int) ([]codeproto.PriorRead, error) {
	calls, err := runs.CallSummaries(ctx, db, runID, seq, ToolFileRead)
	if err != nil {
		return nil, err
	}
	var out []codeproto.PriorRead
	for _, c := range calls {
		if c.Outcome != runs.OutcomeOK {
			continue
		}
		if r, ok := priorRead(c.Metadata); ok {
			r.Step = c.Seq
			out = append(out, r)
		}
	}
	return out, nil
}

// priorRead reads path, range and content_hash from one file_read's metadata.
func priorRead(raw json.RawMessage) (codeproto.PriorRead, bool) {
	var m struct {
		Path        string          `json:"path"`
		Range       json.RawMessage `json:"range"`
		ContentHash string          `json:"content_hash"`
		RepeatOf    json.RawMessage `json:"repeat_of"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Path == "" || m.ContentHash == "" || len(m.RepeatOf) > 0 {
		return codeproto.PriorRead{}, false
	}
	from, to, ok := parseRange(m.Range)
	if !ok {
		return codeproto.PriorRead{}, false
	}
	return codeproto.PriorRead{Path: m.Path, From: from, To: to, ContentHash: m.ContentHash}, true
}

// parseRange accepts the forms a range is recorded in: [a, b],
// {"from": a, "to": b}, or "a-b" (an en dash too).
func parseRange(raw json.RawMessage) (from, to int, ok bool) {
	var pair []int
	if json.Unmarshal(raw, &pair) == nil && len(pair) == 2 {
		return pair[0], pair[1], pair[0] >= 1 && pair[1] >= pair[0]
	}
	var obj struct {
		From *int `json:"from"`
		To   *int `json:"to"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.From != nil && obj.To != nil {
		return *obj.From, *obj.To, *obj.From >= 1 && *obj.To >= *obj.From
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, 0, false
	}
	s = strings.ReplaceAll(s, "–", "-")
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.Atoi(strings.TrimSpace(a))
	y, err2 := strconv.Atoi(strings.TrimSpace(b))
	return x, y, err1 == nil && err2 == nil && x >= 1 && y >= x
}

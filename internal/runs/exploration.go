package runs

import (
	"context"
	"encoding/json"

	"github.com/guilds/guilds/internal/store"
)

// Exploration measures whether a coding run's search tools pay for
// themselves; it is recorded after each generation as metadata.exploration.
type Exploration struct {
	// CallsBeforeFirstEdit counts the tool calls before the run's first
	// successful file_edit or file_write; nil until there is one.
	CallsBeforeFirstEdit *int `json:"calls_before_first_edit"`
	// ReadBytesUnedited sums the bytes file_read returned from files the run
	// never edited.
	ReadBytesUnedited int `json:"read_bytes_unedited"`
}

// CallSummary is a tool call without its arguments and result.
type CallSummary struct {
	Seq         int
	Tool        string
	Outcome     string
	Metadata    json.RawMessage
	ResultBytes int // of the stored (stamped) result
}

// CallSummaries returns the calls of a run before seq (all of them when seq
// is 0), in order, optionally only those of the named tools.
func CallSummaries(ctx context.Context, db store.DB, runID string, before int, tools ...string) ([]CallSummary, error) {
	if tools == nil {
		tools = []string{}
	}
	rows, err := db.Query(ctx, `SELECT seq, tool_name, outcome, metadata, octet_length(result) FROM tool_calls
		WHERE run_id = $1 AND ($2 = 0 OR seq < $2) AND (cardinality($3::text[]) = 0 OR tool_name = ANY($3))
		ORDER BY seq`, runID, before, tools)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var out []CallSummary
	for rows.Next() {
		var c CallSummary
		if err := rows.Scan(&c.Seq, &c.Tool, &c.Outcome, &c.Metadata, &c.ResultBytes); err != nil {
			return nil, store.Map(err)
		}
		out = append(out, c)
	}
	return out, store.Map(rows.Err())
}

// Names of the tools and metadata fields exploration reads (the code tools
// record them; see internal/native/code).
const (
	exploreRead  = "file_read"
	exploreEdit  = "file_edit"
	exploreWrite = "file_write"
	metaPath     = "path"
	metaBytes    = "bytes"
)

// ExplorationOf computes the figures from a run's calls in seq order.
func ExplorationOf(calls []CallSummary) Exploration {
	var e Exploration
	edited := map[string]bool{}
	type read struct {
		path  string
		bytes int
	}
	var reads []read
	for i, c := range calls {
		if c.Outcome != OutcomeOK {
			continue
		}
		var m struct {
			Path  string `json:"path"`
			Bytes *int   `json:"bytes"`
		}
		_ = json.Unmarshal(c.Metadata, &m)
		switch c.Tool {
		case exploreEdit, exploreWrite:
			if e.CallsBeforeFirstEdit == nil {
				n := i
				e.CallsBeforeFirstEdit = &n
			}
			if m.Path != "" {
				edited[m.Path] = true
			}
		case exploreRead:
			n := c.ResultBytes
			if m.Bytes != nil {
				n = *m.Bytes
			}
			reads = append(reads, read{m.Path, n})
		}
	}
	for _, r := range reads {
		if !edited[r.path] {
			e.ReadBytesUnedited += r.bytes
		}
	}
	return e
}

// RecordExploration computes the run's exploration from its calls so far
// and stores it as metadata.exploration.
func RecordExploration(ctx context.Context, db store.DB, runID string) (Exploration, error) {
	calls, err := CallSummaries(ctx, db, runID, 0)
	if err != nil {
		return Exploration{}, err
	}
	e := ExplorationOf(calls)
	raw, _ := json.Marshal(e)
	_, err = db.Exec(ctx, `UPDATE runs SET metadata = jsonb_set(metadata, '{exploration}', $2::jsonb), updated_at = now()
		WHERE id = $1`, runID, raw)
	return e, store.Map(err)
}

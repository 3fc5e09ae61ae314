package codeops

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/guilds/guilds/internal/codeproto"
)

// searchFiles: matching paths with their counts, highest first.
func searchFiles(ctx context.Context, env *Env, t searchTarget, a CodeSearchArgs, args []string) codeproto.Response {
	type hit struct {
		path  string
		count int
	}
	var hits []hit
	found, bad := runSearch(ctx, t.cwd, args, func(r io.Reader) error {
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if p, n, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\x00"); ok {
				var c int
				if _, err := fmt.Sscan(n, &c); err == nil {
					hits = append(hits, hit{env.resultPath(p), c})
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	if bad != nil {
		return *bad
	}
	if !found || len(hits) == 0 {
		return noMatches(a, t)
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].count != hits[j].count {
			return hits[i].count > hits[j].count
		}
		return hits[i].path < hits[j].path
	})
	total := 0
	for _, h := range hits {
		total += h.count
	}
	limit := SearchMaxFiles
	if a.Limit > 0 {
		limit = min(a.Limit, SearchMaxFiles)
	}
	lines := make([]string, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		lines = append(lines, fmt.Sprintf("%s: %d", clipLine(h.path, SearchLineClip), h.count))
	}
	totals := plural(total, "match", "matches") + " in " + plural(len(hits), "file", "files")
	if len(hits) > limit {
		totals += fmt.Sprintf(" (showing the %d with the most; narrow with path or glob, or use mode content)", limit)
	}
	return codeproto.Response{Text: fitLines(lines, totals, env.MaxBytes()),
		Meta: map[string]any{"matches": total, "files": len(hits)}}
}

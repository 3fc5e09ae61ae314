package codeops

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/guilds/guilds/internal/codeproto"
)

// rgEvent is one line of rg --json.
type rgEvent struct {
	Type string `json:"type"`
	Data struct {
		Path       rgText `json:"path"`
		Lines      rgText `json:"lines"`
		LineNumber int    `json:"line_number"`
		Submatches []struct {
			Start int `json:"start"`
		} `json:"submatches"`
		Stats struct {
			Matches           int `json:"matches"`
			SearchesWithMatch int `json:"searches_with_match"`
			MatchedLines      int `json:"matched_lines"`
		} `json:"stats"`
	} `json:"data"`
}

type rgText struct {
	Text  string `json:"text"`
	Bytes string `json:"bytes"` // base64, for text that is not UTF-8
}

func (t rgText) String() string {
	if t.Text != "" || t.Bytes == "" {
		return t.Text
	}
	return "\uFFFD(bytes that are not UTF-8)"
}

// contentBlock is one file's part of a content search.
type contentBlock struct {
	path    string
	lines   []contentLine
	matches int // matching lines kept
}

type contentLine struct {
	text  string
	match bool
}

// searchContent: path:line: text and path-line- context, at most 40 lines
// and 10 matches per file, files in path order. rg searches in parallel, so
// the blocks of the first files by path are kept (no more than the line
// limit can show) and ordered at the end.
func searchContent(ctx context.Context, env *Env, t searchTarget, a CodeSearchArgs, args []string) codeproto.Response {
	limit := SearchMaxLines
	if a.Limit > 0 {
		limit = min(a.Limit, SearchMaxLines)
	}
	var (
		kept                              []contentBlock
		cur                               *contentBlock
		lastMatchLine                     int
		totalMatches, matchedLines, files int
	)
	keep := func() {
		if cur == nil || len(cur.lines) == 0 {
			return
		}
		kept = append(kept, *cur)
		if len(kept) > 2*limit {
			sort.Slice(kept, func(i, j int) bool { return kept[i].path < kept[j].path })
			kept = kept[:limit]
		}
	}
	found, bad := runSearch(ctx, t.cwd, args, func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			raw, err := br.ReadBytes('\n')
			var ev rgEvent
			if len(raw) > 0 && json.Unmarshal(raw, &ev) == nil {
				switch ev.Type {
				case "begin":
					cur, lastMatchLine = &contentBlock{path: env.resultPath(ev.Data.Path.String())}, 0
				case "match", "context":
					if cur == nil {
						break
					}
					isMatch := ev.Type == "match"
					var show bool
					if isMatch {
						show = cur.matches < SearchMaxPerFile
					} else {
						// After a file's last shown match, only its trailing context.
						show = cur.matches < SearchMaxPerFile || ev.Data.LineNumber <= lastMatchLine+a.Context
					}
					if !show || len(cur.lines) >= limit {
						break
					}
					sep := "-"
					if isMatch {
						sep, lastMatchLine = ":", ev.Data.LineNumber
						cur.matches++
					}
					text := strings.TrimRight(ev.Data.Lines.String(), "\r\n")
					cur.lines = append(cur.lines, contentLine{fmt.Sprintf("%s%s%d%s %s", cur.path, sep, ev.Data.LineNumber, sep,
						clipLine(text, SearchLineClip)), isMatch})
				case "end":
					keep()
					cur = nil
				case "summary":
					totalMatches, matchedLines, files = ev.Data.Stats.Matches, ev.Data.Stats.MatchedLines, ev.Data.Stats.SearchesWithMatch
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
	if !found || totalMatches == 0 {
		return noMatches(a, t)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].path < kept[j].path })
	var lines []string
	shown := 0
	for _, b := range kept {
		for _, l := range b.lines {
			if len(lines) == limit {
				break
			}
			lines = append(lines, l.text)
			if l.match {
				shown++
			}
		}
	}
	totals := plural(totalMatches, "match", "matches") + " in " + plural(files, "file", "files")
	if hidden := matchedLines - shown; hidden > 0 {
		totals += fmt.Sprintf(" (%s not shown: at most %d lines, %d matches per file; narrow with path or glob)",
			plural(hidden, "matching line", "matching lines"), limit, SearchMaxPerFile)
	}
	return codeproto.Response{Text: fitLines(lines, totals, env.MaxBytes()),
		Meta: map[string]any{"matches": totalMatches, "files": files}}
}

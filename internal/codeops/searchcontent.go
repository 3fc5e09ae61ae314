package codeops

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
		Stats      struct {
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
// and 10 matches per file, files in path order. rg searches in parallel and
// prints each file whole, so the blocks of the first files by path are kept
// in order (each shows at least one line, so no more than the line limit
// can show), and events that cannot show are counted without decoding.
func searchContent(ctx context.Context, env *Env, t searchTarget, a CodeSearchArgs, args []string) codeproto.Response {
	limit := SearchMaxLines
	if a.Limit > 0 {
		limit = min(a.Limit, SearchMaxLines)
	}
	var (
		kept                              []contentBlock // sorted by path, at most limit
		cur                               *contentBlock
		trailing                          int // context lines still shown after a file's last shown match
		totalMatches, matchedLines, files int
	)
	keep := func() {
		if cur == nil || len(cur.lines) == 0 {
			return
		}
		i := sort.Search(len(kept), func(i int) bool { return kept[i].path > cur.path })
		kept = append(kept, contentBlock{})
		copy(kept[i+1:], kept[i:])
		kept[i] = *cur
		if len(kept) > limit {
			kept = kept[:limit]
		}
	}
	// wanted reports whether the event on raw can still be shown.
	wanted := func(isMatch bool) bool {
		switch {
		case cur == nil || len(cur.lines) >= limit:
			return false
		case isMatch:
			return cur.matches < SearchMaxPerFile
		default:
			return cur.matches < SearchMaxPerFile || trailing > 0
		}
	}
	found, bad := runSearch(ctx, t.cwd, args, func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 64<<10)
		var long []byte
		for {
			raw, err := readLine(br, &long)
			isMatch := bytes.HasPrefix(raw, []byte(`{"type":"match"`))
			isContext := !isMatch && bytes.HasPrefix(raw, []byte(`{"type":"context"`))
			var ev rgEvent
			switch {
			case len(raw) == 0:
			case bytes.HasPrefix(raw, []byte(`{"type":"end"`)):
				keep()
				cur = nil
			case (isMatch || isContext) && !wanted(isMatch):
				if !isMatch && trailing > 0 {
					trailing--
				}
			case json.Unmarshal(raw, &ev) != nil:
			case ev.Type == "begin":
				path := env.resultPath(ev.Data.Path.String())
				cur, trailing = nil, 0
				if len(kept) < limit || path < kept[len(kept)-1].path {
					cur = &contentBlock{path: path}
				}
			case ev.Type == "match" || ev.Type == "context":
				sep := "-"
				if isMatch {
					sep = ":"
					cur.matches++
					if cur.matches == SearchMaxPerFile {
						trailing = a.Context
					}
				} else if cur.matches >= SearchMaxPerFile {
					trailing--
				}
				text := strings.TrimRight(ev.Data.Lines.String(), "\r\n")
				cur.lines = append(cur.lines, contentLine{fmt.Sprintf("%s%s%d%s %s", cur.path, sep, ev.Data.LineNumber, sep,
					clipLine(text, SearchLineClip)), isMatch})
			case ev.Type == "summary":
				totalMatches, matchedLines, files = ev.Data.Stats.Matches, ev.Data.Stats.MatchedLines, ev.Data.Stats.SearchesWithMatch
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

// readLine returns the next line of br, line break included, without
// allocating for a line that fits br's buffer; long holds a longer one. The
// line is valid until the next call.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	*long = append((*long)[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = br.ReadSlice('\n')
		*long = append(*long, line...)
	}
	return *long, err
}

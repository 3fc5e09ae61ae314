package codeops

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/codeproto"
)

// code_search limits.
const (
	SearchMaxFiles    = 30
	SearchMaxLines    = 40
	SearchMaxPerFile  = 10
	SearchMaxContext  = 5
	SearchLineClip    = 300
	SearchTimeout     = 55 * time.Second // inside the orchestrator's 60 s
	searchMaxStderr   = 4 << 10
	searchProgramName = "rg"
)

// CodeSearchArgs are code_search's arguments.
type CodeSearchArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	Mode       string `json:"mode"`
	Fixed      bool   `json:"fixed"`
	IgnoreCase bool   `json:"ignore_case"`
	Context    int    `json:"context"`
	Limit      int    `json:"limit"`
}

// searchTarget is a resolved search root: the argument rg gets (relative
// to the working directory when under it) and how results name paths.
type searchTarget struct {
	cwd     string // filesystem working directory rg runs in
	arg     string // "" for the working directory itself
	display string
}

// ParseSearchArgs decodes and checks code_search's arguments; the graph
// helper's symbols mode shares them.
func ParseSearchArgs(raw json.RawMessage) (CodeSearchArgs, *codeproto.Response) {
	var a CodeSearchArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		r := Errorf("arguments: %v", err)
		return a, &r
	}
	fail := func(format string, v ...any) (CodeSearchArgs, *codeproto.Response) {
		r := Errorf(format, v...)
		return a, &r
	}
	if a.Pattern == "" {
		return fail("pattern: is empty")
	}
	if a.Mode == "" {
		a.Mode = "files"
	}
	switch a.Mode {
	case "files", "content", "symbols":
	default:
		return fail("mode: %q is not a mode (files, content or symbols)", a.Mode)
	}
	if a.Context < 0 || a.Context > SearchMaxContext {
		return fail("context: %d is out of range (0 to %d)", a.Context, SearchMaxContext)
	}
	if a.Limit < 0 {
		return fail("limit: %d is not a count", a.Limit)
	}
	return a, nil
}

// CodeSearch runs code_search in modes files and content; symbols goes to
// the code graph through symbols (nil when the sandbox has none).
func CodeSearch(ctx context.Context, env *Env, raw json.RawMessage, symbols func(context.Context, *Env, json.RawMessage) codeproto.Response) codeproto.Response {
	a, bad := ParseSearchArgs(raw)
	if bad != nil {
		return *bad
	}
	if a.Mode == "symbols" {
		if symbols == nil {
			return Errorf("symbol search is not available in this sandbox")
		}
		return symbols(ctx, env, raw)
	}
	target, bad := env.searchTarget(a.Path)
	if bad != nil {
		return *bad
	}
	args := []string{"--no-messages", "--no-require-git", "--no-config"}
	if a.Fixed {
		args = append(args, "--fixed-strings")
	}
	if a.IgnoreCase {
		args = append(args, "--ignore-case")
	}
	if a.Glob != "" {
		args = append(args, "--glob", a.Glob)
	}
	ctx, cancel := context.WithTimeout(ctx, SearchTimeout)
	defer cancel()
	if a.Mode == "files" {
		args = append(args, "--count-matches", "--with-filename", "--null", "--regexp", a.Pattern)
		return searchFiles(ctx, env, target, a, withTarget(args, target))
	}
	args = append(args, "--json", "--context", fmt.Sprint(a.Context), "--regexp", a.Pattern)
	return searchContent(ctx, env, target, a, withTarget(args, target))
}

func withTarget(args []string, t searchTarget) []string {
	args = append(args, "--")
	if t.arg != "" {
		args = append(args, t.arg)
	}
	return args
}

// searchTarget resolves a search's path (default the working directory).
func (e *Env) searchTarget(p string) (searchTarget, *codeproto.Response) {
	cwd, cwdDisplay := e.Cwd()
	t := searchTarget{cwd: cwd, display: cwdDisplay}
	if p == "" || p == "." {
		if !e.inside(cwd) {
			r := Errorf("path: the working directory %s is outside %s; give a path under it", cwdDisplay, DisplayHome)
			return t, &r
		}
		return t, nil
	}
	fsPath, display, err := e.Resolve(p)
	if err != nil {
		r := fieldErr("path", err)
		return t, &r
	}
	if _, err := os.Stat(fsPath); err != nil {
		r := Errorf("path: %s does not exist", p)
		return t, &r
	}
	t.display = display
	switch rel := e.Rel(fsPath); {
	case rel == ".":
	case strings.HasPrefix(rel, "/"):
		t.arg = fsPath
	default:
		t.arg = rel
	}
	return t, nil
}

// resultPath names a path rg printed: relative to the working directory,
// or its /home/agent form when outside it.
func (e *Env) resultPath(cwd, p string) string {
	if filepath.IsAbs(p) {
		return e.Rel(p)
	}
	return filepath.ToSlash(strings.TrimPrefix(p, "./"))
}

// runSearch runs rg, handing its stdout to read, and turns a failure into
// an ERROR response. found is false when rg found nothing.
func runSearch(ctx context.Context, dir string, args []string, read func(io.Reader) error) (found bool, bad *codeproto.Response) {
	fail := func(format string, v ...any) (bool, *codeproto.Response) {
		r := Errorf(format, v...)
		return false, &r
	}
	cmd := exec.CommandContext(ctx, searchProgramName, args...) //nolint:gosec // G204: fixed program, arguments after --
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: searchMaxStderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail("search: %v", err)
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return fail("text search is not available in this sandbox (%s is not installed)", searchProgramName)
		}
		return fail("search: %v", err)
	}
	readErr := read(out)
	_, _ = io.Copy(io.Discard, out)
	err = cmd.Wait()
	if ctx.Err() != nil {
		return fail("search: timed out after %s; narrow it with path or glob", SearchTimeout)
	}
	if readErr != nil {
		return fail("search: reading the results: %v", readErr)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return false, nil
	}
	msg := strings.TrimSpace(stderr.String())
	field := "pattern"
	if strings.Contains(msg, "glob") {
		field = "glob"
	}
	if msg == "" {
		msg = err.Error()
	}
	return fail("%s: %s", field, oneParagraph(msg))
}

// oneParagraph folds a tool's multi-line error into one line.
func oneParagraph(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return clipLine(strings.Join(parts, " "), 600)
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(l.n, len(p))
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

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
					hits = append(hits, hit{env.resultPath(t.cwd, p), c})
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

func noMatches(a CodeSearchArgs, t searchTarget) codeproto.Response {
	return codeproto.Response{Text: fmt.Sprintf("no matches for %q in %s", a.Pattern, t.display),
		Meta: map[string]any{"matches": 0, "files": 0}}
}

// fitLines joins lines and a totals line within max bytes; when they do
// not fit it stops at a line and says how many it left out.
func fitLines(lines []string, totals string, max int) string {
	var b strings.Builder
	for i, l := range lines {
		left := len(lines) - i
		note := fmt.Sprintf("[stopped at the %d byte cap: %d more lines left out]\n", max, left)
		if b.Len()+len(l)+1+len(note)+len(totals) > max {
			b.WriteString(note)
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(totals)
	return b.String()
}

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
					cur, lastMatchLine = &contentBlock{path: env.resultPath(t.cwd, ev.Data.Path.String())}, 0
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

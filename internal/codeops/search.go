package codeops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
	if err := decodeArgs(raw, &a); err != nil {
		r := Errorf("%v", err)
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
	// Hidden files too (.github/, .env.example), never .git/; .gitignore still holds.
	args := []string{"--no-messages", "--no-require-git", "--no-config", "--hidden", "--glob", "!.git"}
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
func (e *Env) resultPath(p string) string {
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

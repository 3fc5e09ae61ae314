package codeops

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/guilds/guilds/internal/codeproto"
)

// code_match limits.
const (
	MatchDefaultLimit = 30
	MatchMaxLimit     = 100
)

// CodeMatchArgs are code_match's arguments.
type CodeMatchArgs struct {
	Pattern string `json:"pattern"`
	Lang    string `json:"lang"`
	Path    string `json:"path"`
	Limit   int    `json:"limit"`
}

// astGrepMatch is one line of ast-grep --json=stream.
type astGrepMatch struct {
	File  string `json:"file"`
	Lines string `json:"lines"`
	Range struct {
		Start struct {
			Line int `json:"line"`
		} `json:"start"`
	} `json:"range"`
}

var (
	astGrepOnce sync.Once
	astGrepPath string
)

// astGrep finds the syntax search program: ast-grep, or sg when that is
// ast-grep (on many systems sg is newgrp).
func astGrep() string {
	astGrepOnce.Do(func() {
		if p, err := exec.LookPath("ast-grep"); err == nil {
			astGrepPath = p
			return
		}
		if p, err := exec.LookPath("sg"); err == nil {
			if out, err := exec.Command(p, "--version").Output(); err == nil && strings.Contains(string(out), "ast-grep") { //nolint:gosec // G204: a program on PATH, checked
				astGrepPath = p
			}
		}
	})
	return astGrepPath
}

// CodeMatch runs code_match with ast-grep.
func CodeMatch(ctx context.Context, env *Env, raw json.RawMessage) codeproto.Response {
	var a CodeMatchArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if strings.TrimSpace(a.Pattern) == "" {
		return Errorf("pattern: is empty")
	}
	if a.Limit < 0 || a.Limit > MatchMaxLimit {
		return Errorf("limit: %d is out of range (1 to %d, default %d)", a.Limit, MatchMaxLimit, MatchDefaultLimit)
	}
	limit := a.Limit
	if limit == 0 {
		limit = MatchDefaultLimit
	}
	if strings.HasPrefix(a.Lang, "-") || strings.ContainsAny(a.Lang, " \t\n/") {
		return Errorf("lang: %q is not a language name", a.Lang)
	}
	t, bad := env.searchTarget(a.Path)
	if bad != nil {
		return *bad
	}
	prog := astGrep()
	if prog == "" {
		return Errorf("syntax search is not available in this sandbox (ast-grep is not installed)")
	}
	args := []string{"run", "--pattern", a.Pattern, "--json=stream", "--color=never"}
	if a.Lang != "" {
		args = append(args, "--lang", a.Lang)
	}
	ctx, cancel := context.WithTimeout(ctx, SearchTimeout)
	defer cancel()
	hits, msg, bad := runAstGrep(ctx, env, prog, t, args)
	if bad != nil {
		if strings.Contains(bad.Text, "--lang") || strings.Contains(bad.Text, "not supported") {
			return Errorf("lang: %q is not a language syntax search knows (go, python, javascript, typescript, tsx, rust, java, c, cpp, ...)", a.Lang)
		}
		return *bad
	}
	broken := strings.Contains(msg, "ERROR node")
	if len(hits) == 0 && goCall(a) {
		// Go's grammar reads pkg.F($$$X) alone as a type conversion; inside
		// a function body it is the call it looks like.
		rule, _ := json.Marshal(map[string]any{"id": "code_match", "language": "go", "rule": map[string]any{
			"pattern": map[string]string{"context": "func _() { " + a.Pattern + " }", "selector": "call_expression"}}})
		if again, _, bad := runAstGrep(ctx, env, prog, t, []string{"scan", "--inline-rules", string(rule), "--json=stream", "--color=never"}); bad == nil && len(again) > 0 {
			hits, broken = again, false
		}
	}
	files := map[string]bool{}
	for _, h := range hits {
		files[h.path] = true
	}
	total := len(hits)
	if total == 0 {
		if broken {
			lang := a.Lang
			if lang == "" {
				lang = "the files' languages"
			}
			return Errorf("pattern: %q does not parse as %s code; write it as a complete expression, statement or declaration", a.Pattern, lang)
		}
		return codeproto.Response{Text: fmt.Sprintf("no matches for %q in %s", a.Pattern, t.display),
			Meta: map[string]any{"matches": 0, "files": 0}}
	}
	// ast-grep searches files in parallel: order the hits by place.
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].path != hits[j].path {
			return hits[i].path < hits[j].path
		}
		return hits[i].line < hits[j].line
	})
	lines := make([]string, 0, min(limit, total))
	for _, h := range hits[:min(limit, total)] {
		lines = append(lines, fmt.Sprintf("%s:%d: %s", h.path, h.line, h.text))
	}
	totals := plural(total, "match", "matches") + " in " + plural(len(files), "file", "files")
	if total > len(lines) {
		totals += fmt.Sprintf(" (showing the first %d; raise limit up to %d, or narrow with path)", len(lines), MatchMaxLimit)
	}
	if broken {
		totals += "\nnote: the pattern holds a syntax error, so some matches may be missing"
	}
	return codeproto.Response{Text: fitLines(lines, totals, env.MaxBytes()),
		Meta: map[string]any{"matches": total, "files": len(files)}}
}

// matchHit is one structural match.
type matchHit struct {
	path string
	line int
	text string
}

// goCallHead is a Go call pattern's callee: a name or a selector chain.
var goCallHead = regexp.MustCompile(`^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*\(`)

// goCall reports whether a pattern meant for Go is one call, callee(args),
// the shape Go's grammar misreads when it stands alone.
func goCall(a CodeMatchArgs) bool {
	if a.Lang != "" && a.Lang != "go" && a.Lang != "golang" {
		return false
	}
	p := strings.TrimSpace(a.Pattern)
	head := goCallHead.FindString(p)
	if head == "" || !strings.HasSuffix(p, ")") {
		return false
	}
	depth := 0
	for i, c := range p[len(head)-1:] {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return len(head)-1+i == len(p)-1
			}
		}
	}
	return false
}

// runAstGrep runs ast-grep with args and the search target and reads its
// stream of matches; msg is its stderr (warnings), bad a failure.
func runAstGrep(ctx context.Context, env *Env, prog string, t searchTarget, args []string) (hits []matchHit, msg string, bad *codeproto.Response) {
	fail := func(format string, v ...any) ([]matchHit, string, *codeproto.Response) {
		r := Errorf(format, v...)
		return nil, "", &r
	}
	args = append(args, "--")
	if t.arg != "" {
		args = append(args, t.arg)
	} else {
		args = append(args, ".")
	}
	cmd := exec.CommandContext(ctx, prog, args...) //nolint:gosec // G204: fixed program, the pattern is an argument
	cmd.Dir = t.cwd
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: searchMaxStderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail("code_match: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return fail("code_match: %v", err)
	}
	br := bufio.NewReaderSize(out, 64<<10)
	var readErr error
	for {
		raw, err := br.ReadBytes('\n')
		var m astGrepMatch
		if len(raw) > 1 && json.Unmarshal(raw, &m) == nil && m.File != "" {
			first, _, _ := strings.Cut(m.Lines, "\n")
			hits = append(hits, matchHit{env.resultPath(m.File), m.Range.Start.Line + 1,
				clipLine(strings.TrimSpace(first), SearchLineClip)})
		}
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
	}
	_, _ = io.Copy(io.Discard, out)
	err = cmd.Wait()
	if ctx.Err() != nil {
		return fail("code_match: timed out after %s; narrow it with path or lang", SearchTimeout)
	}
	if readErr != nil {
		return fail("code_match: reading the results: %v", readErr)
	}
	msg = strings.TrimSpace(stderr.String())
	var exit *exec.ExitError
	noMatch := errors.As(err, &exit) && exit.ExitCode() == 1 && !strings.Contains(msg, "error:")
	if err != nil && !noMatch {
		if msg == "" {
			msg = err.Error()
		}
		return fail("pattern: %s", oneParagraph(msg))
	}
	return hits, msg, nil
}

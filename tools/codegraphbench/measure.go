package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// score is what one sampled definition's answers earned.
type score struct {
	module, stratum string
	truth, tool     int // caller sets' sizes (gopls, the graph's direct edges)
	hit             int // callers both name
	unflagged       int // the graph's edges flagged neither as guesses nor as through an interface
	unflaggedHit    int
	through         int  // edges the graph lists through an interface (gopls counts a call through an interface as a caller of each implementation)
	capped          bool // the answer needed more than one page
	findQual        bool // code_find of the qualified name named it first
	findBare        bool // code_find of the bare name named it first
}

func measure(work, home, mv, helperBin, goplsBin string, per int, seed uint64, verbose bool) ([]score, error) {
	name, dir, err := fetchModule(mv, filepath.Join(home, "repos"))
	if err != nil {
		return nil, err
	}
	cands, index, err := scan(dir)
	if err != nil {
		return nil, err
	}
	targets := sample(cands, per, seed)
	server, err := startLSP(dir, []string{goplsBin}, []string{"GOFLAGS=-mod=mod", "GOWORK=off"})
	if err != nil {
		return nil, err
	}
	defer server.close()
	h := helper{bin: helperBin, home: home, run: filepath.Join(work, "run")}
	module, _, _ := strings.Cut(mv, "@")
	var out []score
	for _, t := range targets {
		sites, err := server.incoming(filepath.Join(dir, t.rel), t.line-1, t.col)
		if err != nil {
			fmt.Fprintf(os.Stderr, "skipped %s %s: gopls: %v\n", t.rel, t.symbol(), err)
			continue
		}
		truth := map[string]bool{}
		for _, s := range sites {
			rel, err := filepath.Rel(dir, s.file)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			truth[rel+" "+index[rel].at(s.line)] = true
		}
		edges, capped, err := h.callers(name, t)
		if err != nil {
			return nil, err
		}
		sc := score{module: module, stratum: t.stratum, truth: len(truth), capped: capped}
		tool := map[string]bool{}
		for _, e := range edges {
			key := e.rel + " " + index[e.rel].at(e.line)
			if e.through {
				sc.through++
			}
			if tool[key] {
				continue
			}
			tool[key] = true
			if !e.guess && !e.through {
				sc.unflagged++
				if truth[key] {
					sc.unflaggedHit++
				}
			}
			if truth[key] {
				sc.hit++
			} else if verbose {
				fmt.Fprintf(os.Stderr, "extra  %s %s: %s (guess %v)\n", module, t.symbol(), key, e.guess)
			}
		}
		sc.tool = len(tool)
		if verbose {
			for k := range truth {
				if !tool[k] {
					fmt.Fprintf(os.Stderr, "missed %s %s (%s): %s\n", module, t.symbol(), t.stratum, k)
				}
			}
		}
		if sc.findQual, err = h.findsFirst(name, t.symbol(), t); err != nil {
			return nil, err
		}
		if sc.findBare, err = h.findsFirst(name, t.name, t); err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// helper runs guilds-code as the local driver does: one request per run,
// base64 JSON in and out, the workspace home named by GUILDS_CODE_HOME.
type helper struct{ bin, home, run string }

func (h helper) call(tool string, args any) (string, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	req, err := json.Marshal(map[string]any{"tool": tool, "args": json.RawMessage(raw), "run_id": "bench", "call_id": "c", "step": 1,
		"max_bytes": 1 << 20})
	if err != nil {
		return "", err
	}
	cmd := exec.Command(h.bin, base64.StdEncoding.EncodeToString(req)) //nolint:gosec // G204: the helper under measure
	cmd.Env = append(os.Environ(), "GUILDS_CODE_HOME="+h.home)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", tool, raw, err)
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(out)))
	if err != nil {
		return "", err
	}
	var resp struct{ Text string }
	if err := json.Unmarshal(dec, &resp); err != nil {
		return "", err
	}
	return resp.Text, nil
}

type toolEdge struct {
	rel            string
	line           int
	guess, through bool
}

var (
	headerRe = regexp.MustCompile(`^\S+ \S+  (\S+):(\d+)`)
	edgeRe   = regexp.MustCompile(`^  ← .*?  (\S+):(\d+)(.*)$`)
	pageRe   = regexp.MustCompile(`not listed \(page (\d+) lists them`)
)

// callers asks code_callers for t, every page, and keeps the edges under
// t's own definition.
func (h helper) callers(repo string, t target) ([]toolEdge, bool, error) {
	prefix := "repos/" + repo + "/"
	var out []toolEdge
	for page := 1; ; page++ {
		args := map[string]any{"symbol": t.symbol(), "in": prefix + t.rel}
		if page > 1 {
			args["page"] = page
		}
		text, err := h.call("code_callers", args)
		if err != nil {
			return nil, false, err
		}
		mine, next := false, false
		for _, line := range strings.Split(text, "\n") {
			if m := headerRe.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[2])
				mine = strings.TrimPrefix(m[1], prefix) == t.rel && n == t.line
				continue
			}
			if !mine {
				continue
			}
			if m := edgeRe.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[2])
				out = append(out, toolEdge{rel: strings.TrimPrefix(m[1], prefix), line: n,
					guess: strings.Contains(m[3], "(guess"), through: strings.Contains(m[3], "(through ") || strings.Contains(m[3], ", an implementation)")})
			}
			if pageRe.MatchString(line) && strings.HasPrefix(line, "  …") {
				next = true
			}
		}
		if !next {
			return out, page > 1, nil
		}
	}
}

var findRe = regexp.MustCompile(`^1\. \S+ \S+  (\S+):(\d+)`)

// findsFirst reports whether code_find, asked question over the whole
// module, names t first.
func (h helper) findsFirst(repo, question string, t target) (bool, error) {
	prefix := "repos/" + repo + "/"
	text, err := h.call("code_find", map[string]any{"question": question, "in": prefix[:len(prefix)-1], "limit": 1})
	if err != nil {
		return false, err
	}
	first, _, _ := strings.Cut(text, "\n")
	m := findRe.FindStringSubmatch(first)
	if m == nil {
		return false, nil
	}
	n, _ := strconv.Atoi(m[2])
	return strings.TrimPrefix(m[1], prefix) == t.rel && n == t.line, nil
}

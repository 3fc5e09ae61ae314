package codeops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/codeproto"
)

// file_read limits.
const (
	ReadDefaultLimit = 200
	ReadMaxLimit     = 500
	// ReadLineClip is the longest line file_read shows whole, in characters.
	ReadLineClip = 400
	// binarySniff is how much of a file is checked for a NUL byte.
	binarySniff = 8000
	// maxReadFile bounds the file file_read loads.
	maxReadFile = 64 << 20
)

// FileReadArgs are file_read's arguments.
type FileReadArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// FileRead runs the file_read tool.
func FileRead(_ context.Context, env *Env, raw json.RawMessage) codeproto.Response {
	var a FileReadArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if a.Offset < 0 {
		return Errorf("offset: %d is not a line number (the first line is 1)", a.Offset)
	}
	if a.Limit < 0 || a.Limit > ReadMaxLimit {
		return Errorf("limit: %d is out of range (1 to %d, default %d)", a.Limit, ReadMaxLimit, ReadDefaultLimit)
	}
	offset, limit := max(a.Offset, 1), a.Limit
	if limit == 0 {
		limit = ReadDefaultLimit
	}
	fsPath, display, err := env.Resolve(a.Path)
	if err != nil {
		return fieldErr("path", err)
	}
	st, err := os.Stat(fsPath)
	if err != nil {
		return Errorf("path: %s does not exist", a.Path)
	}
	if st.IsDir() {
		return Errorf("path: %s is a folder; list it with shell (ls) or code_search", a.Path)
	}
	if st.Size() > maxReadFile {
		return Errorf("path: %s is %d bytes, over the %d byte limit of file_read; use shell (head, sed -n)", a.Path, st.Size(), maxReadFile)
	}
	content, err := os.ReadFile(fsPath) //nolint:gosec // G304: confined to the workspace by Resolve
	if err != nil {
		return Errorf("path: cannot read %s: %v", a.Path, err)
	}
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	name := env.Rel(fsPath)
	meta := map[string]any{"path": display, "content_hash": hash}

	if bytes.IndexByte(content[:min(len(content), binarySniff)], 0) >= 0 {
		meta["lines"] = 0
		return codeproto.Response{Text: fmt.Sprintf("%s is a binary file (%d bytes); not shown", name, len(content)), Meta: meta}
	}
	lines := splitLines(content)
	n := len(lines)
	meta["lines"] = n
	if n == 0 {
		meta["range"] = []int{0, 0}
		return codeproto.Response{Text: name + " is empty (0 lines)", Meta: meta}
	}
	if offset > n {
		return Errorf("offset: %d is past the end of %s (%d lines)", offset, name, n)
	}
	last := min(offset+limit-1, n)

	// Build the numbered lines, stopping before the cap.
	width := len(strconv.Itoa(last))
	header := func(a, b int) string { return fmt.Sprintf("%s · lines %d–%d of %d\n", name, a, b, n) }
	footerRoom := len(fmt.Sprintf("\n[stopped at the %d byte cap; continue with offset %d]", env.MaxBytes(), n))
	room := env.MaxBytes() - len(header(offset, last)) - footerRoom
	var body strings.Builder
	end := offset - 1
	for i := offset; i <= last; i++ {
		line := fmt.Sprintf("%*d\t%s\n", width, i, clipLine(lines[i-1], ReadLineClip))
		if body.Len()+len(line) > room && i > offset {
			break
		}
		body.WriteString(line)
		end = i
	}
	capped := end < last
	meta["range"] = []int{offset, end}

	if pr, ok := coveredBy(env.Req.PriorReads, display, hash, offset, end); ok {
		meta["repeat_of"] = pr.Step
		return codeproto.Response{Text: fmt.Sprintf("%s lines %d–%d: unchanged since step %d; read that result.", name, offset, end, pr.Step), Meta: meta}
	}

	var b strings.Builder
	b.WriteString(header(offset, end))
	b.WriteString(body.String())
	switch {
	case capped:
		fmt.Fprintf(&b, "[stopped at the %d byte cap; continue with offset %d]", env.MaxBytes(), end+1)
	case end < n:
		fmt.Fprintf(&b, "[continue with offset %d]", end+1)
	}
	return codeproto.Response{Text: strings.TrimSuffix(b.String(), "\n"), Meta: meta}
}

// coveredBy finds an earlier read of the same file content whose range holds
// from–to.
func coveredBy(prior []codeproto.PriorRead, path, hash string, from, to int) (codeproto.PriorRead, bool) {
	for _, p := range prior {
		if p.Path == path && p.ContentHash == hash && p.From <= from && p.To >= to && p.Step > 0 {
			return p, true
		}
	}
	return codeproto.PriorRead{}, false
}

// splitLines splits content into lines without their line breaks (a
// "\r\n" ending goes too); a final line break ends the last line rather
// than starting an empty one.
func splitLines(content []byte) []string {
	if len(content) == 0 {
		return nil
	}
	s := string(content)
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// clipLine keeps the first max characters of a line and says how many it
// cut. Invalid UTF-8 is shown as U+FFFD.
func clipLine(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == max {
			break
		}
		count++
	}
	cut := utf8.RuneCountInString(s[i:])
	return s[:i] + fmt.Sprintf(" … [%d more characters]", cut)
}

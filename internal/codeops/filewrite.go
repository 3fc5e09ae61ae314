package codeops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/guilds/guilds/internal/codeproto"
)

// newFileMode is the mode of a file file_write creates.
const newFileMode = 0o644

// FileEditArgs are file_edit's arguments.
type FileEditArgs struct {
	Path       string  `json:"path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

// FileWriteArgs are file_write's arguments.
type FileWriteArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// FileEdit runs the file_edit tool: an exact string replaced once (or
// everywhere with replace_all), atomically, the mode kept.
func FileEdit(_ context.Context, env *Env, raw json.RawMessage) codeproto.Response {
	var a FileEditArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if a.OldString == nil || *a.OldString == "" {
		return Errorf("old_string: is empty; give the exact text to replace (file_write writes a whole file)")
	}
	if a.NewString == nil {
		return Errorf("new_string: is missing")
	}
	oldS, newS := *a.OldString, *a.NewString
	if oldS == newS {
		return Errorf("new_string: is the same as old_string; nothing to change")
	}
	fsPath, display, err := env.Resolve(a.Path)
	if err != nil {
		return fieldErr("path", err)
	}
	st, err := os.Stat(fsPath)
	if err != nil {
		return Errorf("path: %s does not exist; create it with file_write", a.Path)
	}
	if !st.Mode().IsRegular() {
		return Errorf("path: %s is not a regular file", a.Path)
	}
	raw2, err := os.ReadFile(fsPath) //nolint:gosec // G304: confined to the workspace by Resolve
	if err != nil {
		return Errorf("path: cannot read %s: %v", a.Path, err)
	}
	content := string(raw2)
	name := env.Rel(fsPath)
	count := strings.Count(content, oldS)
	switch {
	case count == 0:
		hint := "read the file again: the text must match exactly, whitespace included"
		if strings.Contains(content, "\r\n") && strings.Contains(oldS, "\n") && !strings.Contains(oldS, "\r\n") {
			hint = "the file's lines end in \\r\\n; old_string must too"
		}
		return Errorf("old_string: not found in %s; nothing changed (%s)", name, hint)
	case count > 1 && !a.ReplaceAll:
		return Errorf("old_string: occurs %d times in %s; nothing changed (add surrounding lines to make it unique, or set replace_all)", count, name)
	}
	updated := strings.ReplaceAll(content, oldS, newS)
	if !a.ReplaceAll {
		updated = strings.Replace(content, oldS, newS, 1)
	}
	if err := writeFileAtomic(fsPath, []byte(updated), st.Mode().Perm()); err != nil {
		return Errorf("path: cannot write %s: %v; nothing changed", name, err)
	}
	added, removed := editLineCounts(content, oldS, newS, a.ReplaceAll)
	return codeproto.Response{Text: fmt.Sprintf("edited %s (+%d −%d)", name, added, removed),
		Meta: writeMeta(display, added, removed, updated)}
}

// FileWrite runs the file_write tool: the whole file, missing folders
// created, atomically, an existing file's mode kept.
func FileWrite(_ context.Context, env *Env, raw json.RawMessage) codeproto.Response {
	var a FileWriteArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if a.Content == nil {
		return Errorf("content: is missing")
	}
	fsPath, display, err := env.Resolve(a.Path)
	if err != nil {
		return fieldErr("path", err)
	}
	if fsPath == env.Home {
		return Errorf("path: %s is the home folder, not a file", a.Path)
	}
	mode := fs.FileMode(newFileMode)
	old := ""
	existed := false
	if st, err := os.Stat(fsPath); err == nil {
		if st.IsDir() {
			return Errorf("path: %s is a folder", a.Path)
		}
		if !st.Mode().IsRegular() {
			return Errorf("path: %s is not a regular file", a.Path)
		}
		mode = st.Mode().Perm()
		raw, err := os.ReadFile(fsPath) //nolint:gosec // G304: confined to the workspace by Resolve
		if err != nil {
			return Errorf("path: cannot read %s: %v", a.Path, err)
		}
		old, existed = string(raw), true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Errorf("path: %s: %v", a.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(fsPath), 0o755); err != nil { //nolint:gosec // G301: the agent's own folders, made as mkdir -p makes them
		return Errorf("path: cannot create the folders of %s: %v", a.Path, err)
	}
	if err := writeFileAtomic(fsPath, []byte(*a.Content), mode); err != nil {
		return Errorf("path: cannot write %s: %v", a.Path, err)
	}
	added, removed := countLines(*a.Content), 0
	if existed {
		added, removed = diffLineCounts(splitLines([]byte(old)), splitLines([]byte(*a.Content)))
	}
	return codeproto.Response{Text: fmt.Sprintf("wrote %s (%s)", env.Rel(fsPath), plural(countLines(*a.Content), "line", "lines")),
		Meta: writeMeta(display, added, removed, *a.Content)}
}

func writeMeta(display string, added, removed int, content string) map[string]any {
	sum := sha256.Sum256([]byte(content))
	return map[string]any{"path": display, "lines_added": added, "lines_removed": removed,
		"content_hash": hex.EncodeToString(sum[:])}
}

// countLines is the number of lines of content, a last line without a
// line break included.
func countLines(content string) int {
	return len(splitLines([]byte(content)))
}

// editLineCounts counts the lines an edit adds and removes: each
// occurrence's block of whole lines before and after, with the lines the
// two have in common at either end left out.
func editLineCounts(content, oldS, newS string, all bool) (added, removed int) {
	start := 0
	for {
		i := strings.Index(content[start:], oldS)
		if i < 0 {
			break
		}
		at := start + i
		lineStart := strings.LastIndexByte(content[:at], '\n') + 1
		endAt := at + len(oldS)
		// Later occurrences that start on this block's lines join it.
		for all {
			k := strings.Index(content[endAt:], oldS)
			if k < 0 || strings.IndexByte(content[endAt:endAt+k], '\n') >= 0 {
				break
			}
			endAt += k + len(oldS)
		}
		lineEnd := len(content)
		if j := strings.IndexByte(content[endAt:], '\n'); j >= 0 {
			lineEnd = endAt + j
		}
		before := content[lineStart:lineEnd]
		after := content[lineStart:at] + strings.ReplaceAll(content[at:lineEnd], oldS, newS)
		if !all {
			after = content[lineStart:at] + newS + content[at+len(oldS):lineEnd]
		}
		a, r := diffLineCounts(strings.Split(before, "\n"), strings.Split(after, "\n"))
		added, removed = added+a, removed+r
		if !all {
			break
		}
		start = lineEnd
		if start >= len(content) {
			break
		}
	}
	return added, removed
}

// diffLineCounts counts the lines between the common start and end of two
// line lists.
func diffLineCounts(a, b []string) (added, removed int) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return len(b) - p - s, len(a) - p - s
}

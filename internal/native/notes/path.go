package notes

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/native/artifacts"
)

// MaxKeyLen bounds a note's file name, in bytes.
const MaxKeyLen = 128

// MaxContent bounds a note's content, in bytes: below the 64 KiB result cap so
// note_get always returns a whole note.
const MaxContent = 60_000

// CheckKey reports why key is not a valid note file name, or nil.
func CheckKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("key is required: a file name ending in .md, e.g. todo.md")
	case !utf8.ValidString(key):
		return fmt.Errorf("key must be valid UTF-8")
	case len(key) > MaxKeyLen:
		return fmt.Errorf("key must be at most %d bytes", MaxKeyLen)
	case strings.ContainsAny(key, `/\`):
		return fmt.Errorf("key %q: notes have no folders, so a key may not contain / or \\", key)
	case strings.Contains(key, ".."):
		return fmt.Errorf("key %q may not contain \"..\"", key)
	case !strings.HasSuffix(key, ".md") || len(key) == len(".md"):
		return fmt.Errorf("key %q must be a file name ending in .md", key)
	case strings.TrimSpace(key) != key:
		return fmt.Errorf("key %q may not start or end with spaces", key)
	}
	for _, r := range key {
		if unicode.IsControl(r) {
			return fmt.Errorf("key may not contain control characters")
		}
	}
	return nil
}

// Path is the display path of a note: level/key, e.g. guild/plan.md.
func Path(level artifacts.Scope, key string) string { return string(level) + "/" + key }

// ParsePath splits a display path into its level and key.
func ParsePath(p string) (artifacts.Scope, string, error) {
	level, key, ok := strings.Cut(strings.TrimSpace(p), "/")
	if !ok || !artifacts.Scope(level).Valid() {
		return "", "", fmt.Errorf("path %q must be agent/<key>.md, guild/<key>.md or org/<key>.md", p)
	}
	if err := CheckKey(key); err != nil {
		return "", "", err
	}
	return artifacts.Scope(level), key, nil
}

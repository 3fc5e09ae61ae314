// Package workspacefiles holds the rules every tool follows when it reads or
// writes a file in an agent's workspace on behalf of a service (a Qonto
// invoice, a Drive document):
//
//   - the path is under /home/agent: relative paths start there, and
//     anything that leaves it is refused;
//   - links are resolved inside the container, by asking the sandbox
//     (realpath), never by joining paths on the host, and the resolved path
//     must still be under /home/agent;
//   - sizes are bounded (MaxFile, or the caller's smaller limit), checked
//     before anything is sent anywhere;
//   - a file's type comes from its content (its first bytes), not from its
//     name;
//   - content moves only through the sandbox file API (CopyFrom, CopyTo).
//
// A refusal is a *FieldError naming the argument it is about.
package workspacefiles

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/guilds/guilds/sandbox"
)

// Home is the workspace as the agent sees it.
const Home = "/home/agent"

// MaxFile is the largest file moved between a workspace and a service: the
// sandbox file API's own bound.
const MaxFile = sandbox.MaxFileSize

// maxPath bounds a path argument, in bytes.
const maxPath = 1024

// resolveTimeout bounds asking the sandbox where a path leads.
const resolveTimeout = 30 * time.Second

// Workspace is the part of the agent's sandbox these rules use
// (internal/workspaces.Manager).
type Workspace interface {
	sandbox.Workspace
	CopyFrom(ctx context.Context, agentID, path string) (sandbox.File, error)
}

// FieldError is a refused path or file, naming the argument.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func refuse(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Clean checks a path argument and returns its absolute, clean form under
// Home. It does not look at the workspace: Resolve does.
func Clean(field, p string) (string, error) {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return "", refuse(field, "is required: a file under %s, e.g. %s/invoices/march.pdf", Home, Home)
	case len(p) > maxPath:
		return "", refuse(field, "is %d bytes; at most %d", len(p), maxPath)
	case !utf8.ValidString(p) || strings.ContainsFunc(p, unicode.IsControl):
		return "", refuse(field, "must be UTF-8 text without control characters")
	}
	if !strings.HasPrefix(p, "/") {
		p = Home + "/" + p
	}
	clean := path.Clean(p)
	if !strings.HasPrefix(clean, Home+"/") {
		return "", refuse(field, "%q is outside the workspace: files must be under %s/", p, Home)
	}
	return clean, nil
}

// Resolve cleans p and asks the sandbox where it leads, links followed.
// With mustExist the file must be there (realpath -e); otherwise only the
// existing part of the path is resolved (realpath -m), for a file about to
// be written. The resolved path must be under Home.
func Resolve(ctx context.Context, ws Workspace, agentID, field, p string, mustExist bool) (string, error) {
	if ws == nil || agentID == "" {
		return "", sandbox.ErrNoWorkspace
	}
	clean, err := Clean(field, p)
	if err != nil {
		return "", err
	}
	flag := "-m"
	if mustExist {
		flag = "-e"
	}
	res, err := ws.Exec(ctx, agentID, sandbox.ExecRequest{Cmd: []string{"realpath", flag, "--", clean}, Timeout: resolveTimeout, MaxOutput: 4 * maxPath})
	if err != nil {
		return "", fmt.Errorf("ask the workspace where %s leads: %w", clean, err)
	}
	if res.ExitCode != 0 {
		if mustExist {
			return "", refuse(field, "%s does not exist in the workspace", clean)
		}
		return "", refuse(field, "%s cannot be written: %s", clean, strings.TrimSpace(string(res.Stderr)))
	}
	real := strings.TrimSuffix(string(res.Stdout), "\n")
	if !strings.HasPrefix(real, Home+"/") || path.Clean(real) != real {
		return "", refuse(field, "%s leads outside the workspace (a link to %s): files must be under %s/", clean, real, Home)
	}
	return real, nil
}

// File is a workspace file read for a service.
type File struct {
	Path    string // resolved, under Home
	Name    string // its base name
	Content []byte
	Type    string // detected from the content, e.g. application/pdf
}

// Read reads a file for a service: resolved inside the container, at most
// limit bytes (MaxFile when limit is 0 or larger), its type detected from
// its content. allowed, when given, lists the only types accepted.
func Read(ctx context.Context, ws Workspace, agentID, field, p string, limit int, allowed ...string) (File, error) {
	if limit <= 0 || limit > MaxFile {
		limit = MaxFile
	}
	real, err := Resolve(ctx, ws, agentID, field, p, true)
	if err != nil {
		return File{}, err
	}
	f, err := ws.CopyFrom(ctx, agentID, real)
	switch {
	case errors.Is(err, sandbox.ErrNotFound):
		return File{}, refuse(field, "%s does not exist in the workspace", real)
	case errors.Is(err, sandbox.ErrInvalid):
		return File{}, refuse(field, "%s is not a regular file", real)
	case errors.Is(err, sandbox.ErrTooLarge):
		return File{}, refuse(field, "%s is larger than %d bytes", real, limit)
	case err != nil:
		return File{}, fmt.Errorf("read %s from the workspace: %w", real, err)
	}
	if len(f.Content) > limit {
		return File{}, refuse(field, "%s is %d bytes; at most %d", real, len(f.Content), limit)
	}
	if len(f.Content) == 0 {
		return File{}, refuse(field, "%s is empty", real)
	}
	out := File{Path: real, Name: path.Base(real), Content: f.Content, Type: Detect(f.Content)}
	if len(allowed) > 0 && !contains(allowed, out.Type) {
		return File{}, refuse(field, "%s holds %s, judged by its content; only %s are accepted", real, out.Type, strings.Join(allowed, ", "))
	}
	return out, nil
}

// Write writes content for a service to p, resolved inside the container;
// missing folders are created. It returns the path written.
func Write(ctx context.Context, ws Workspace, agentID, field, p string, content []byte, limit int) (string, error) {
	if limit <= 0 || limit > MaxFile {
		limit = MaxFile
	}
	if len(content) > limit {
		return "", refuse(field, "the file is %d bytes; at most %d are written to the workspace", len(content), limit)
	}
	real, err := Resolve(ctx, ws, agentID, field, p, false)
	if err != nil {
		return "", err
	}
	if err := ws.CopyTo(ctx, agentID, real, content, 0o644); err != nil {
		return "", fmt.Errorf("write %s into the workspace: %w", real, err)
	}
	return real, nil
}

// Detect names a file's type from its first bytes (net/http's sniffing,
// which knows PDF, PNG, JPEG, GIF, WebP, ZIP, text and more), without
// parameters such as a charset.
func Detect(content []byte) string {
	t := http.DetectContentType(content)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

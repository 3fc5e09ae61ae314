// Package drive is Google Drive confined to one folder: a local adapter on
// the Drive API (v3) with the login's Google token, in which every call is
// limited to the folder the operator chose after the Google login and its
// descendants. The token can see the whole Drive, so confinement is this
// package's job: searches and recent-file lists ask the Drive API with the
// shared-drive flags and keep only files inside the folder; every call on
// one file checks its ancestry before anything is returned or written.
// There is no delete. Files move between Drive and the agent's workspace
// only under the workspace file rules (internal/workspacefiles):
// create_file reads file_path through the sandbox file API, and
// download_file_content writes file_path and returns the path, never the
// bytes.
//
// The chosen folder is stored on the login, in its settings (Conn.Settings,
// not its credential, so a token refresh keeps it): "folder_id" and
// "folder_name", the connection's account_hint. A login without one answers
// ErrNoFolder, which is adapters.ErrChoiceNeeded: it stays pending.
package drive

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

// Name is the catalog's config.adapter for this service.
const Name = "drive"

// Fields of the login that hold the chosen folder.
const (
	FieldFolderID   = "folder_id"
	FieldFolderName = "folder_name"
)

// FolderType is Drive's type of a folder.
const FolderType = "application/vnd.google-apps.folder"

// Limits.
const (
	// MaxText bounds read_file_content's text and create_file's textContent.
	MaxText = 64 << 10
	// maxDepth bounds an ancestry walk.
	maxDepth = 64
	// maxList bounds the files a search or recent list returns.
	maxList = 50
)

func init() { adapters.Register(&Adapter{}) }

// Adapter implements adapters.Adapter for the confined Drive.
type Adapter struct{}

func (*Adapter) Name() string { return Name }

// UsesSettings: the chosen folder is in the login's settings.
func (*Adapter) UsesSettings() bool { return true }

// ErrNoFolder: the login has no chosen folder; it is not connected yet.
var ErrNoFolder = fmt.Errorf("this Drive login has no folder chosen: choose the folder the agent may use (not My Drive) to finish connecting it: %w", adapters.ErrChoiceNeeded)

// Check validates the login's chosen folder and returns its name, the
// login's account_hint.
func (a *Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	id := strings.TrimSpace(c.Settings[FieldFolderID])
	if id == "" {
		return "", ErrNoFolder
	}
	f, err := CheckFolder(ctx, c, id)
	if err != nil {
		return "", adapters.Rejection(err)
	}
	return f.Name, nil
}

// Call runs one tool inside the login's folder.
func (a *Adapter) Call(ctx context.Context, c adapters.Conn, tool string, raw json.RawMessage) (string, error) {
	h, in, err := adapters.Dispatch[handler, args](Name, tools, tool, raw)
	if err != nil {
		return "", err
	}
	folder := strings.TrimSpace(c.Settings[FieldFolderID])
	if folder == "" {
		return "", ErrNoFolder
	}
	s := &scope{c: c, folder: folder, parents: map[string][]string{}, inside: map[string]bool{folder: true}}
	return h(ctx, s, in)
}

type handler func(ctx context.Context, s *scope, in args) (string, error)

// args is the union of the tools' arguments.
type args struct {
	Query       string `json:"query"`
	FileID      string `json:"file_id"`
	FilePath    string `json:"file_path"`
	Name        string `json:"name"`
	ParentID    string `json:"parent_id"`
	TextContent string `json:"textContent"`
	// OldTextContent is textContent under the name create_file took before
	// the spec's; a call that still sends it is served.
	OldTextContent string `json:"text_content"`
	Limit          int    `json:"limit"`
}

func authHeader(c adapters.Conn) http.Header {
	return http.Header{"Authorization": {"Bearer " + c.Cred.AccessToken}}
}

// allDrives are the flags that make the Drive API see shared drives too.
func allDrives(q url.Values) url.Values {
	if q == nil {
		q = url.Values{}
	}
	q.Set("supportsAllDrives", "true")
	return q
}

func getJSON(ctx context.Context, c adapters.Conn, path string, q url.Values, out any) error {
	return c.GetJSON(ctx, path, allDrives(q), authHeader(c), out)
}

// getRaw reads a file's bytes (alt=media or an export), at most limit.
func getRaw(ctx context.Context, c adapters.Conn, path string, q url.Values, limit int) ([]byte, error) {
	u := strings.TrimRight(c.BaseURL, "/") + path + "?" + allDrives(q).Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Cred.AccessToken)
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the service could not be reached: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading the service's answer: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 300 {
			msg = strings.ToValidUTF8(msg[:300], "") + "…"
		}
		return nil, &adapters.HTTPError{Status: resp.StatusCode, Body: msg}
	}
	if len(body) > limit {
		return nil, fmt.Errorf("the file is larger than %d bytes", limit)
	}
	return body, nil
}

// Drive ids are URL-safe tokens.
var idRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,160}$`)

func checkID(field, id string) (string, error) {
	id = strings.TrimSpace(id)
	if !idRe.MatchString(id) {
		return "", fmt.Errorf("%s: %q is not a Drive file id", field, id)
	}
	return id, nil
}

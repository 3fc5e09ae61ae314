package drive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/workspacefiles"
)

var tools = map[string]handler{
	"search_files":          searchFiles,
	"list_recent_files":     listRecent,
	"get_file_metadata":     metadata,
	"get_file_permissions":  permissions,
	"read_file_content":     readContent,
	"download_file_content": download,
	"copy_file":             copyFile,
	"create_file":           createFile,
}

// Tools are the confined toolset's names; create_file and copy_file write
// and start Off (the catalog's overlay).
var Tools = []string{"search_files", "list_recent_files", "get_file_metadata", "get_file_permissions",
	"read_file_content", "download_file_content", "copy_file", "create_file"}

func fileTable(files []File) string {
	t := adapters.NewTable("id", "name", "type", "modified", "size")
	for _, f := range files {
		t.Add(f.ID, f.Name, f.MimeType, f.ModifiedTime, f.Size)
	}
	return t.String()
}

// list asks the Drive API over every drive the login sees, then keeps the
// files inside the folder, at most limit of them.
func (s *scope) list(ctx context.Context, q string, orderBy string, limit int) ([]File, error) {
	if limit <= 0 || limit > maxList {
		limit = maxList
	}
	params := url.Values{"q": {q + " and trashed = false"}, "corpora": {"allDrives"}, "includeItemsFromAllDrives": {"true"},
		"pageSize": {"100"}, "fields": {"nextPageToken,files(" + fileFields + ")"}}
	if orderBy != "" {
		params.Set("orderBy", orderBy)
	}
	var out []File
	for page := 0; page < 5 && len(out) < limit; page++ {
		var ans filesAnswer
		if err := getJSON(ctx, s.c, "/files", params, &ans); err != nil {
			return nil, err
		}
		for _, f := range ans.Files {
			s.parents[f.ID] = f.Parents
		}
		for _, f := range ans.Files {
			if f.ID == s.folder {
				continue
			}
			in, err := s.within(ctx, f.ID)
			if err != nil {
				return nil, err
			}
			if in && len(out) < limit {
				out = append(out, f)
			}
		}
		if ans.NextPageToken == "" {
			break
		}
		params.Set("pageToken", ans.NextPageToken)
	}
	return out, nil
}

// quote makes s a Drive query string literal.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func searchFiles(ctx context.Context, s *scope, in args) (string, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" || len(q) > 500 || strings.ContainsFunc(q, unicode.IsControl) {
		return "", fmt.Errorf("search_files: query is required: words to find in file names and text (at most 500 bytes)")
	}
	files, err := s.list(ctx, "(name contains "+quote(q)+" or fullText contains "+quote(q)+")", "", in.Limit)
	if err != nil {
		return "", err
	}
	return fileTable(files), nil
}

func listRecent(ctx context.Context, s *scope, in args) (string, error) {
	files, err := s.list(ctx, "mimeType != '"+FolderType+"'", "modifiedTime desc", in.Limit)
	if err != nil {
		return "", err
	}
	return fileTable(files), nil
}

func metadata(ctx context.Context, s *scope, in args) (string, error) {
	f, err := s.file(ctx, "file_id", in.FileID)
	if err != nil {
		return "", err
	}
	t := adapters.NewTable("id", "name", "type", "modified", "size", "link")
	t.Add(f.ID, f.Name, f.MimeType, f.ModifiedTime, f.Size, f.WebViewLink)
	return t.String(), nil
}

func permissions(ctx context.Context, s *scope, in args) (string, error) {
	f, err := s.file(ctx, "file_id", in.FileID)
	if err != nil {
		return "", err
	}
	var ans struct {
		Permissions []struct {
			ID, Type, Role, EmailAddress, Domain, DisplayName string
		} `json:"permissions"`
	}
	if err := getJSON(ctx, s.c, "/files/"+url.PathEscape(f.ID)+"/permissions",
		url.Values{"fields": {"permissions(id,type,role,emailAddress,domain,displayName)"}}, &ans); err != nil {
		return "", err
	}
	t := adapters.NewTable("type", "role", "who")
	for _, p := range ans.Permissions {
		who := p.EmailAddress
		if who == "" {
			who = p.Domain
		}
		if who == "" {
			who = p.DisplayName
		}
		t.Add(p.Type, p.Role, who)
	}
	return t.String(), nil
}

// exportAs is how a Google file (Docs, Sheets, Slides, Drawings) is read
// as text and downloaded as a file.
var exportAs = map[string]struct{ text, file string }{
	"application/vnd.google-apps.document":     {"text/plain", "application/pdf"},
	"application/vnd.google-apps.spreadsheet":  {"text/csv", "application/pdf"},
	"application/vnd.google-apps.presentation": {"text/plain", "application/pdf"},
	"application/vnd.google-apps.drawing":      {"", "image/png"},
}

func content(ctx context.Context, s *scope, f File, asText bool, limit int) ([]byte, error) {
	if f.MimeType == FolderType {
		return nil, fmt.Errorf("file_id: %s is a folder", f.ID)
	}
	if ex, ok := exportAs[f.MimeType]; ok {
		mt := ex.file
		if asText {
			mt = ex.text
		}
		if mt == "" {
			return nil, fmt.Errorf("file_id: %s (%s) has no text form; use download_file_content", f.ID, f.MimeType)
		}
		return getRaw(ctx, s.c, "/files/"+url.PathEscape(f.ID)+"/export", url.Values{"mimeType": {mt}}, limit)
	}
	if strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
		return nil, fmt.Errorf("file_id: %s (%s) cannot be read or downloaded", f.ID, f.MimeType)
	}
	return getRaw(ctx, s.c, "/files/"+url.PathEscape(f.ID), url.Values{"alt": {"media"}}, limit)
}

func readContent(ctx context.Context, s *scope, in args) (string, error) {
	f, err := s.file(ctx, "file_id", in.FileID)
	if err != nil {
		return "", err
	}
	body, err := content(ctx, s, f, true, MaxText)
	if err != nil {
		return "", fmt.Errorf("read_file_content: %w (larger files: download_file_content)", err)
	}
	if !utf8.Valid(body) || bytes.ContainsRune(body, 0) {
		return "", fmt.Errorf("read_file_content: %s is not text; download_file_content writes it to the workspace", f.ID)
	}
	return string(body), nil
}

func download(ctx context.Context, s *scope, in args) (string, error) {
	if _, err := workspacefiles.Clean("file_path", in.FilePath); err != nil {
		return "", fmt.Errorf("download_file_content: %w", err)
	}
	ws, agent, err := workspacefiles.From(ctx)
	if err != nil {
		return "", fmt.Errorf("download_file_content: %w", err)
	}
	f, err := s.file(ctx, "file_id", in.FileID)
	if err != nil {
		return "", err
	}
	body, err := content(ctx, s, f, false, workspacefiles.MaxFile)
	if err != nil {
		return "", fmt.Errorf("download_file_content: %w", err)
	}
	p, err := workspacefiles.Write(ctx, ws, agent, "file_path", in.FilePath, body, 0)
	if err != nil {
		return "", fmt.Errorf("download_file_content: %w", err)
	}
	t := adapters.NewTable("path", "bytes", "type", "file_id")
	t.Add(p, len(body), workspacefiles.Detect(body), f.ID)
	return t.String(), nil
}

func checkName(raw string) (string, error) {
	n := strings.TrimSpace(raw)
	if n == "" || len(n) > 255 || strings.ContainsFunc(n, unicode.IsControl) {
		return "", fmt.Errorf("name: a file name of 1 to 255 bytes without control characters")
	}
	return n, nil
}

func copyFile(ctx context.Context, s *scope, in args) (string, error) {
	f, err := s.file(ctx, "file_id", in.FileID)
	if err != nil {
		return "", err
	}
	if f.MimeType == FolderType {
		return "", fmt.Errorf("file_id: %s is a folder; copy_file copies files", f.ID)
	}
	parent, err := s.folderOf(ctx, "parent_id", in.ParentID)
	if err != nil {
		return "", err
	}
	meta := map[string]any{"parents": []string{parent}}
	if strings.TrimSpace(in.Name) != "" {
		n, err := checkName(in.Name)
		if err != nil {
			return "", err
		}
		meta["name"] = n
	}
	var out File
	if err := postJSON(ctx, s.c, s.c.BaseURL, "/files/"+url.PathEscape(f.ID)+"/copy", meta, &out); err != nil {
		return "", err
	}
	return fileTable([]File{out}), nil
}

func createFile(ctx context.Context, s *scope, in args) (string, error) {
	name, err := checkName(in.Name)
	if err != nil {
		return "", fmt.Errorf("create_file: %w", err)
	}
	if in.TextContent == "" {
		in.TextContent = in.OldTextContent
	}
	var body []byte
	var mt string
	switch {
	case in.FilePath != "" && in.TextContent != "":
		return "", fmt.Errorf("create_file: give file_path or textContent, not both")
	case in.TextContent != "":
		if len(in.TextContent) > MaxText || !utf8.ValidString(in.TextContent) {
			return "", fmt.Errorf("create_file: textContent is small UTF-8 text (at most %d bytes); larger files go through file_path", MaxText)
		}
		body, mt = []byte(in.TextContent), "text/plain"
	case in.FilePath != "":
		if _, err := workspacefiles.Clean("file_path", in.FilePath); err != nil {
			return "", fmt.Errorf("create_file: %w", err)
		}
		ws, agent, err := workspacefiles.From(ctx)
		if err != nil {
			return "", fmt.Errorf("create_file: %w", err)
		}
		f, err := workspacefiles.Read(ctx, ws, agent, "file_path", in.FilePath, 0)
		if err != nil {
			return "", fmt.Errorf("create_file: %w", err)
		}
		body, mt = f.Content, f.Type
	default:
		return "", fmt.Errorf("create_file: file_path is required: a file under %s (or small text as textContent)", workspacefiles.Home)
	}
	parent, err := s.folderOf(ctx, "parent_id", in.ParentID)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	metaPart, _ := w.CreatePart(textproto.MIMEHeader{"Content-Type": {"application/json; charset=UTF-8"}})
	meta, _ := json.Marshal(map[string]any{"name": name, "parents": []string{parent}, "mimeType": mt})
	_, _ = metaPart.Write(meta)
	media, _ := w.CreatePart(textproto.MIMEHeader{"Content-Type": {mt}})
	_, _ = media.Write(body)
	_ = w.Close()
	h := authHeader(s.c)
	h.Set("Content-Type", "multipart/related; boundary="+w.Boundary())
	q := allDrives(url.Values{"uploadType": {"multipart"}, "fields": {fileFields}})
	var out File
	if err := s.c.DoJSON(ctx, http.MethodPost, uploadBase(s.c.BaseURL), "/files", q, h, &buf, &out); err != nil {
		return "", err
	}
	return fileTable([]File{out}), nil
}

// uploadBase is the Drive API's upload endpoint for its base URL.
func uploadBase(base string) string {
	b := strings.TrimRight(base, "/")
	if i := strings.LastIndex(b, "/drive/v3"); i >= 0 {
		return b[:i] + "/upload/drive/v3"
	}
	return b + "/upload"
}

func postJSON(ctx context.Context, c adapters.Conn, base, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	h := authHeader(c)
	h.Set("Content-Type", "application/json")
	return c.DoJSON(ctx, http.MethodPost, base, path, allDrives(url.Values{"fields": {fileFields}}), h, bytes.NewReader(body), out)
}

// Package drivetest is a local Drive API v3 for tests of the confined Drive
// adapter (internal/adapters/drive) and of what is built on it.
package drivetest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Fake is a local Drive API v3 speaking its wire format for what the
// adapter uses: files.list with q (the subset of the query language below),
// corpora, includeItemsFromAllDrives, supportsAllDrives, pageSize,
// pageToken and orderBy; files.get (metadata, alt=media), files.export,
// files.copy, multipart upload, permissions.list, drives.list, and the
// "root" alias. Shared-drive files are invisible without
// supportsAllDrives=true, and lists skip them without corpora=allDrives.
type Fake struct {
	*httptest.Server
	// Valid accepts a bearer token.
	Valid func(token string) bool

	mu       sync.Mutex
	files    map[string]*File
	order    []string
	next     int
	requests []*url.URL
	writes   []string // "copy <id> -> <parent>", "create <name> -> <parent>"
}

// File is one file or folder of the fake (a shared drive is a folder whose
// DriveID is its own ID).
type File struct {
	ID, Name, MimeType, DriveID, Modified string
	Parents                               []string
	Content                               []byte
	Shared                                bool // in Shared with me
	Trashed                               bool
	Perms                                 []map[string]string
}

// exportTypes are the export formats the fake converts to.
var exportTypes = map[string]string{"text/plain": "text/plain", "text/csv": "text/csv", "application/pdf": "application/pdf", "image/png": "image/png"}

// FolderType is Drive's folder type.
const FolderType = "application/vnd.google-apps.folder"

// New serves a Drive that accepts the one bearer token given.
func New(t testing.TB, token string) *Fake {
	return NewValid(t, func(s string) bool { return s == token })
}

// NewValid serves a Drive that accepts the tokens valid accepts.
func NewValid(t testing.TB, valid func(string) bool) *Fake {
	d := &Fake{Valid: valid, files: map[string]*File{}}
	d.Server = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.Close)
	return d
}

// Add stores a file.
func (d *Fake) Add(f File) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f.Modified == "" {
		f.Modified = fmt.Sprintf("2026-09-%02dT10:00:00.000Z", 1+len(d.order)%28)
	}
	if f.Perms == nil {
		f.Perms = []map[string]string{{"id": "p1", "type": "user", "role": "owner", "emailAddress": "owner@acme.example"}}
	}
	d.files[f.ID] = &f
	d.order = append(d.order, f.ID)
}

// Seen are the requests' URLs so far.
func (d *Fake) Seen() []*url.URL {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*url.URL(nil), d.requests...)
}

func fail(w http.ResponseWriter, status int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg,
		"errors": []any{map[string]any{"domain": "global", "reason": reason, "message": msg}}}})
}

// Writes are the writes so far: "copy <id> -> <parent>", "create <name> -> <parent>".
func (d *Fake) Writes() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.writes...)
}

// Content is the content of the file named name ("" and false when none).
func (d *Fake) Content(name string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range d.files {
		if f.Name == name {
			return f.Content, true
		}
	}
	return nil, false
}

func (f *File) json() map[string]any {
	m := map[string]any{"id": f.ID, "name": f.Name, "mimeType": f.MimeType, "parents": f.Parents, "modifiedTime": f.Modified,
		"trashed": f.Trashed, "webViewLink": "https://drive.example/file/d/" + f.ID}
	if f.DriveID != "" {
		m["driveId"] = f.DriveID
	}
	if !strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
		m["size"] = strconv.Itoa(len(f.Content))
	}
	return m
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

func (d *Fake) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.requests = append(d.requests, r.URL)
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !d.Valid(tok) {
		fail(w, 401, "authError", "Invalid Credentials")
		return
	}
	q := r.URL.Query()
	all := q.Get("supportsAllDrives") == "true"
	visible := func(id string) (*File, bool) {
		f, ok := d.files[id]
		if !ok || (f.DriveID != "" && !all) {
			return nil, false
		}
		return f, true
	}
	path := r.URL.Path
	switch {
	case path == "/upload/drive/v3/files" && r.Method == http.MethodPost:
		d.upload(w, r)
	case path == "/drive/v3/drives":
		var out []any
		for _, id := range d.order {
			if f := d.files[id]; f.DriveID == f.ID {
				out = append(out, map[string]any{"id": f.ID, "name": f.Name, "kind": "drive#drive"})
			}
		}
		writeJSON(w, map[string]any{"drives": out})
	case path == "/drive/v3/files" && r.Method == http.MethodGet:
		d.list(w, q)
	case strings.HasPrefix(path, "/drive/v3/files/"):
		rest := strings.TrimPrefix(path, "/drive/v3/files/")
		id, sub, _ := strings.Cut(rest, "/")
		if id == "root" {
			id = "root-id"
		}
		f, ok := visible(id)
		if !ok {
			fail(w, 404, "notFound", "File not found: "+id+".")
			return
		}
		switch {
		case sub == "" && r.Method == http.MethodGet && q.Get("alt") == "media":
			if strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
				fail(w, 403, "fileNotDownloadable", "Only files with binary content can be downloaded. Use Export with Docs Editors files.")
				return
			}
			_, _ = w.Write(f.Content)
		case sub == "" && r.Method == http.MethodGet:
			writeJSON(w, f.json())
		case sub == "export":
			if !strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
				fail(w, 403, "fileNotExportable", "Export only supports Docs Editors files.")
				return
			}
			mt, ok := exportTypes[q.Get("mimeType")]
			if !ok {
				fail(w, 400, "badRequest", "The requested conversion is not supported.")
				return
			}
			w.Header().Set("Content-Type", mt)
			_, _ = fmt.Fprintf(w, "[%s as %s] %s", f.Name, mt, f.Content)
		case sub == "permissions":
			writeJSON(w, map[string]any{"permissions": f.Perms})
		case sub == "copy" && r.Method == http.MethodPost:
			var in struct {
				Name    string   `json:"name"`
				Parents []string `json:"parents"`
			}
			_ = json.NewDecoder(r.Body).Decode(&in)
			name := in.Name
			if name == "" {
				name = "Copy of " + f.Name
			}
			nf := d.create(name, f.MimeType, in.Parents, f.Content)
			d.writes = append(d.writes, "copy "+f.ID+" -> "+strings.Join(in.Parents, ","))
			writeJSON(w, nf.json())
		default:
			fail(w, 400, "badRequest", "unsupported request")
		}
	default:
		fail(w, 404, "notFound", "Not Found")
	}
}

func (d *Fake) create(name, mt string, parents []string, content []byte) *File {
	d.next++
	nf := &File{ID: fmt.Sprintf("new%03d", d.next), Name: name, MimeType: mt, Parents: parents, Content: content, Modified: "2026-09-30T10:00:00.000Z",
		Perms: []map[string]string{{"id": "p1", "type": "user", "role": "owner", "emailAddress": "owner@acme.example"}}}
	if len(parents) > 0 {
		if p := d.files[parents[0]]; p != nil {
			nf.DriveID = p.DriveID
		}
	}
	d.files[nf.ID] = nf
	d.order = append(d.order, nf.ID)
	return nf
}

func (d *Fake) upload(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("uploadType") != "multipart" {
		fail(w, 400, "badRequest", "uploadType must be multipart")
		return
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/related" {
		fail(w, 400, "badContent", "Bad content type. Please use multipart/related.")
		return
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var meta struct {
		Name     string   `json:"name"`
		Parents  []string `json:"parents"`
		MimeType string   `json:"mimeType"`
	}
	part, err := mr.NextPart()
	if err != nil || json.NewDecoder(part).Decode(&meta) != nil {
		fail(w, 400, "badContent", "the first part must be the JSON metadata")
		return
	}
	media, err := mr.NextPart()
	if err != nil {
		fail(w, 400, "badContent", "the second part must be the media")
		return
	}
	body, _ := io.ReadAll(media)
	nf := d.create(meta.Name, meta.MimeType, meta.Parents, body)
	d.writes = append(d.writes, "create "+meta.Name+" -> "+strings.Join(meta.Parents, ","))
	writeJSON(w, nf.json())
}

// list evaluates the query subset the adapter sends: clauses joined by
// "and", a parenthesised "or" of terms, and the terms 'X' in parents,
// sharedWithMe, mimeType = / != 'X', trashed = false, name contains 'X',
// fullText contains 'X'. Anything else is Drive's 400 Invalid Value.
func (d *Fake) list(w http.ResponseWriter, q url.Values) {
	allDrives := q.Get("corpora") == "allDrives"
	if allDrives && (q.Get("includeItemsFromAllDrives") != "true" || q.Get("supportsAllDrives") != "true") {
		fail(w, 403, "teamDrivesParameterRequired", "includeItemsFromAllDrives and supportsAllDrives must be true with corpora allDrives")
		return
	}
	match, err := parseQuery(q.Get("q"))
	if err != nil {
		fail(w, 400, "invalid", "Invalid Value")
		return
	}
	var out []*File
	for _, id := range d.order {
		f := d.files[id]
		if id == "root-id" || (f.DriveID != "" && !allDrives) || !match(f) {
			continue
		}
		out = append(out, f)
	}
	if q.Get("orderBy") == "modifiedTime desc" {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Modified > out[j].Modified })
	}
	size, _ := strconv.Atoi(q.Get("pageSize"))
	if size <= 0 || size > 1000 {
		size = 100
	}
	from, _ := strconv.Atoi(q.Get("pageToken"))
	to := min(len(out), from+size)
	files := []any{}
	for _, f := range out[min(from, len(out)):to] {
		files = append(files, f.json())
	}
	ans := map[string]any{"files": files, "kind": "drive#fileList"}
	if to < len(out) {
		ans["nextPageToken"] = strconv.Itoa(to)
	}
	writeJSON(w, ans)
}

func unquote(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", false
	}
	return strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(s[1 : len(s)-1]), true
}

func parseQuery(q string) (func(*File) bool, error) {
	var preds []func(*File) bool
	for _, clause := range splitTop(q, " and ") {
		clause = strings.TrimSpace(clause)
		var ors []func(*File) bool
		inner := clause
		if strings.HasPrefix(clause, "(") && strings.HasSuffix(clause, ")") {
			inner = clause[1 : len(clause)-1]
		}
		for _, term := range splitTop(inner, " or ") {
			p, err := parseTerm(strings.TrimSpace(term))
			if err != nil {
				return nil, err
			}
			ors = append(ors, p)
		}
		preds = append(preds, func(f *File) bool {
			for _, p := range ors {
				if p(f) {
					return true
				}
			}
			return false
		})
	}
	return func(f *File) bool {
		for _, p := range preds {
			if !p(f) {
				return false
			}
		}
		return true
	}, nil
}

// splitTop splits s at sep outside quotes and parentheses.
func splitTop(s, sep string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted:
			i++
		case c == '\'':
			quoted = !quoted
		case c == '(' && !quoted:
			depth++
		case c == ')' && !quoted:
			depth--
		case !quoted && depth == 0 && strings.HasPrefix(s[i:], sep):
			out = append(out, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(out, s[start:])
}

func parseTerm(t string) (func(*File) bool, error) {
	switch {
	case t == "sharedWithMe":
		return func(f *File) bool { return f.Shared }, nil
	case t == "trashed = false":
		return func(f *File) bool { return !f.Trashed }, nil
	case strings.HasSuffix(t, " in parents"):
		v, ok := unquote(strings.TrimSuffix(t, " in parents"))
		if !ok {
			return nil, fmt.Errorf("bad term %q", t)
		}
		if v == "root" {
			v = "root-id"
		}
		return func(f *File) bool {
			for _, p := range f.Parents {
				if p == v {
					return true
				}
			}
			return false
		}, nil
	}
	for _, op := range []string{" != ", " = ", " contains "} {
		field, val, ok := strings.Cut(t, op)
		if !ok {
			continue
		}
		v, ok := unquote(val)
		if !ok {
			return nil, fmt.Errorf("bad term %q", t)
		}
		get := map[string]func(*File) string{
			"mimeType": func(f *File) string { return f.MimeType },
			"name":     func(f *File) string { return f.Name },
			"fullText": func(f *File) string { return f.Name + " " + string(f.Content) },
		}[field]
		if get == nil {
			return nil, fmt.Errorf("bad field %q", field)
		}
		switch op {
		case " = ":
			return func(f *File) bool { return get(f) == v }, nil
		case " != ":
			return func(f *File) bool { return get(f) != v }, nil
		default:
			return func(f *File) bool { return strings.Contains(strings.ToLower(get(f)), strings.ToLower(v)) }, nil
		}
	}
	return nil, fmt.Errorf("bad term %q", t)
}

// Secret is in every file outside the folder Tree's login chooses.
const Secret = "top secret numbers"

// Outside are the ids (and a name) of Tree's files outside that folder,
// which no call may return, read, copy into or reveal.
var Outside = []string{"hidden1", "otherplan", "sdplan", "sharedplan", "plan-secret"}

// Tree fills the Drive a login sees: the folder proj ("Project X") in My
// Drive with a subfolder, and outside it a file in My Drive, another
// folder, a shared drive and a folder shared with the login, all holding
// "plan" files.
func (d *Fake) Tree() {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	for _, f := range []File{
		{ID: "root-id", Name: "My Drive", MimeType: FolderType},
		{ID: "proj", Name: "Project X", MimeType: FolderType, Parents: []string{"root-id"}},
		{ID: "plan", Name: "plan.txt", MimeType: "text/plain", Parents: []string{"proj"}, Content: []byte("the plan: ship")},
		{ID: "sub", Name: "drafts", MimeType: FolderType, Parents: []string{"proj"}},
		{ID: "deep", Name: "plan doc", MimeType: "application/vnd.google-apps.document", Parents: []string{"sub"}, Content: []byte("deep plan text")},
		{ID: "logo", Name: "logo.png", MimeType: "image/png", Parents: []string{"proj"}, Content: []byte(png)},
		{ID: "old", Name: "old plan", MimeType: "text/plain", Parents: []string{"proj"}, Trashed: true, Content: []byte("trashed plan")},
		{ID: "hidden1", Name: "plan-secret.txt", MimeType: "text/plain", Parents: []string{"root-id"}, Content: []byte(Secret + " plan")},
		{ID: "other", Name: "Other", MimeType: FolderType, Parents: []string{"root-id"}},
		{ID: "otherplan", Name: "other plan.txt", MimeType: "text/plain", Parents: []string{"other"}, Content: []byte(Secret)},
		{ID: "sd1", Name: "Finance drive", MimeType: FolderType, DriveID: "sd1"},
		{ID: "sdplan", Name: "sd plan.txt", MimeType: "text/plain", Parents: []string{"sd1"}, DriveID: "sd1", Content: []byte(Secret)},
		{ID: "shared", Name: "Shared folder", MimeType: FolderType, Shared: true},
		{ID: "sharedplan", Name: "shared plan.txt", MimeType: "text/plain", Parents: []string{"shared"}, Content: []byte(Secret)},
	} {
		d.Add(f)
	}
}

package drive_test

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

// fakeDrive is a local Drive API v3 speaking its wire format for what the
// adapter uses: files.list with q (the subset of the query language below),
// corpora, includeItemsFromAllDrives, supportsAllDrives, pageSize,
// pageToken and orderBy; files.get (metadata, alt=media), files.export,
// files.copy, multipart upload, permissions.list, drives.list, and the
// "root" alias. Shared-drive files are invisible without
// supportsAllDrives=true, and lists skip them without corpora=allDrives.
type fakeDrive struct {
	*httptest.Server
	token string

	mu       sync.Mutex
	files    map[string]*fakeFile
	order    []string
	next     int
	requests []*url.URL
	writes   []string // "copy <id> -> <parent>", "create <name> -> <parent>"
}

type fakeFile struct {
	ID, Name, MimeType, DriveID, Modified string
	Parents                               []string
	Content                               []byte
	Shared                                bool // in Shared with me
	Trashed                               bool
	Perms                                 []map[string]string
}

const folderType = "application/vnd.google-apps.folder"

func newFakeDrive(t testing.TB, token string) *fakeDrive {
	d := &fakeDrive{token: token, files: map[string]*fakeFile{}}
	d.Server = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.Close)
	return d
}

func (d *fakeDrive) add(f fakeFile) {
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

func (d *fakeDrive) seen() []*url.URL {
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

func (f *fakeFile) json() map[string]any {
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

func (d *fakeDrive) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.requests = append(d.requests, r.URL)
	if r.Header.Get("Authorization") != "Bearer "+d.token {
		fail(w, 401, "authError", "Invalid Credentials")
		return
	}
	q := r.URL.Query()
	all := q.Get("supportsAllDrives") == "true"
	visible := func(id string) (*fakeFile, bool) {
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
			w.Header().Set("Content-Type", q.Get("mimeType"))
			_, _ = fmt.Fprintf(w, "[%s as %s] %s", f.Name, q.Get("mimeType"), f.Content)
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

func (d *fakeDrive) create(name, mt string, parents []string, content []byte) *fakeFile {
	d.next++
	nf := &fakeFile{ID: fmt.Sprintf("new%03d", d.next), Name: name, MimeType: mt, Parents: parents, Content: content, Modified: "2026-09-30T10:00:00.000Z",
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

func (d *fakeDrive) upload(w http.ResponseWriter, r *http.Request) {
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
func (d *fakeDrive) list(w http.ResponseWriter, q url.Values) {
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
	var out []*fakeFile
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

func parseQuery(q string) (func(*fakeFile) bool, error) {
	var preds []func(*fakeFile) bool
	for _, clause := range splitTop(q, " and ") {
		clause = strings.TrimSpace(clause)
		var ors []func(*fakeFile) bool
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
		preds = append(preds, func(f *fakeFile) bool {
			for _, p := range ors {
				if p(f) {
					return true
				}
			}
			return false
		})
	}
	return func(f *fakeFile) bool {
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

func parseTerm(t string) (func(*fakeFile) bool, error) {
	switch {
	case t == "sharedWithMe":
		return func(f *fakeFile) bool { return f.Shared }, nil
	case t == "trashed = false":
		return func(f *fakeFile) bool { return !f.Trashed }, nil
	case strings.HasSuffix(t, " in parents"):
		v, ok := unquote(strings.TrimSuffix(t, " in parents"))
		if !ok {
			return nil, fmt.Errorf("bad term %q", t)
		}
		if v == "root" {
			v = "root-id"
		}
		return func(f *fakeFile) bool {
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
		get := map[string]func(*fakeFile) string{
			"mimeType": func(f *fakeFile) string { return f.MimeType },
			"name":     func(f *fakeFile) string { return f.Name },
			"fullText": func(f *fakeFile) string { return f.Name + " " + string(f.Content) },
		}[field]
		if get == nil {
			return nil, fmt.Errorf("bad field %q", field)
		}
		switch op {
		case " = ":
			return func(f *fakeFile) bool { return get(f) == v }, nil
		case " != ":
			return func(f *fakeFile) bool { return get(f) != v }, nil
		default:
			return func(f *fakeFile) bool { return strings.Contains(strings.ToLower(get(f)), strings.ToLower(v)) }, nil
		}
	}
	return nil, fmt.Errorf("bad term %q", t)
}

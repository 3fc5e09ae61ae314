package drive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

// fileFields are the fields every file answer asks for.
const fileFields = "id,name,mimeType,parents,driveId,modifiedTime,size,trashed,webViewLink"

// File is a Drive file as the tools show it.
type File struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	MimeType     string   `json:"mimeType"`
	Parents      []string `json:"parents"`
	DriveID      string   `json:"driveId"`
	ModifiedTime string   `json:"modifiedTime"`
	Size         string   `json:"size"`
	Trashed      bool     `json:"trashed"`
	WebViewLink  string   `json:"webViewLink"`
}

// scope is one call's view: the chosen folder and what it learnt of the
// tree, so one call never asks twice about the same file.
type scope struct {
	c       adapters.Conn
	folder  string
	parents map[string][]string
	inside  map[string]bool
}

// errOutside is the refusal of a file outside the folder. It says no more
// than a missing file would, so it reveals nothing of the rest of the Drive.
func errOutside(field, id string) error {
	return fmt.Errorf("%s: no file %s in this login's folder", field, id)
}

// get reads one file's metadata; a file Drive does not have reads as outside.
func (s *scope) get(ctx context.Context, field, id string) (File, error) {
	var f File
	err := getJSON(ctx, s.c, "/files/"+url.PathEscape(id), url.Values{"fields": {fileFields}}, &f)
	var he *adapters.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return f, errOutside(field, id)
	}
	if err == nil {
		s.parents[f.ID] = f.Parents
	}
	return f, err
}

// within reports whether id is the folder or one of its descendants,
// walking parents through the Drive API (a file may have several).
func (s *scope) within(ctx context.Context, id string) (bool, error) {
	if in, known := s.inside[id]; known {
		return in, nil
	}
	seen := map[string]bool{}
	frontier := []string{id}
	for depth := 0; len(frontier) > 0 && depth < maxDepth; depth++ {
		var next []string
		for _, cur := range frontier {
			if seen[cur] {
				continue
			}
			seen[cur] = true
			if in, known := s.inside[cur]; known {
				if in {
					s.inside[id] = true
					return true, nil
				}
				continue
			}
			parents, ok := s.parents[cur]
			if !ok {
				var f File
				err := getJSON(ctx, s.c, "/files/"+url.PathEscape(cur), url.Values{"fields": {"id,parents"}}, &f)
				var he *adapters.HTTPError
				if errors.As(err, &he) && he.Status == http.StatusNotFound {
					s.inside[cur] = false
					continue
				}
				if err != nil {
					return false, err
				}
				parents = f.Parents
				s.parents[cur] = parents
			}
			next = append(next, parents...)
		}
		frontier = next
	}
	s.inside[id] = false
	return false, nil
}

// file reads one file the call may use: inside the folder and not trashed.
func (s *scope) file(ctx context.Context, field, raw string) (File, error) {
	id, err := checkID(field, raw)
	if err != nil {
		return File{}, err
	}
	if id != s.folder {
		in, err := s.within(ctx, id)
		if err != nil {
			return File{}, err
		}
		if !in {
			return File{}, errOutside(field, id)
		}
	}
	f, err := s.get(ctx, field, id)
	if err != nil {
		return f, err
	}
	if f.Trashed {
		return File{}, errOutside(field, id)
	}
	return f, nil
}

// folderOf is a destination folder inside the login's folder (the folder
// itself when raw is empty).
func (s *scope) folderOf(ctx context.Context, field, raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return s.folder, nil
	}
	f, err := s.file(ctx, field, raw)
	if err != nil {
		return "", err
	}
	if f.MimeType != FolderType {
		return "", fmt.Errorf("%s: %s is not a folder", field, f.ID)
	}
	return f.ID, nil
}

// Places of a folder the operator may choose.
const (
	PlaceMyDrive      = "my_drive"
	PlaceSharedWithMe = "shared_with_me"
	PlaceSharedDrive  = "shared_drive"
)

// Folder is a folder offered for the choice after the Google login.
type Folder struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Place string `json:"place"`
}

type filesAnswer struct {
	Files         []File `json:"files"`
	NextPageToken string `json:"nextPageToken"`
}

// Corpora of a folder list: My Drive, Shared with me, the shared drives.
const (
	CorpusMy     = "my"
	CorpusShared = "shared"
	CorpusDrives = "drives"
)

// ChoiceError is a folder list's or choice's bad input, naming the field.
type ChoiceError struct{ Field, Message string }

func (e *ChoiceError) Error() string { return e.Field + ": " + e.Message }

// Folders lists what the operator chooses from: the folders at the top of
// My Drive, the folders shared with the login, and the shared drives.
func Folders(ctx context.Context, c adapters.Conn) ([]Folder, error) {
	var out []Folder
	for _, corpus := range []string{CorpusMy, CorpusShared, CorpusDrives} {
		f, err := ListFolders(ctx, c, corpus, "")
		if err != nil {
			return nil, err
		}
		out = append(out, f...)
	}
	return out, nil
}

// ListFolders lists one corpus's folders: with no parent its top (the
// folders at the top of My Drive, the folders shared with the login, the
// shared drives), else the folders inside parent, wherever it is.
func ListFolders(ctx context.Context, c adapters.Conn, corpus, parent string) ([]Folder, error) {
	place := map[string]string{CorpusMy: PlaceMyDrive, CorpusShared: PlaceSharedWithMe, CorpusDrives: PlaceSharedDrive}[corpus]
	if place == "" {
		return nil, &ChoiceError{Field: "corpus", Message: fmt.Sprintf("%q is not one of my, shared, drives", corpus)}
	}
	folderQ := " and mimeType = '" + FolderType + "' and trashed = false"
	q := url.Values{"fields": {"files(id,name)"}, "pageSize": {"100"}, "orderBy": {"name"}}
	switch {
	case strings.TrimSpace(parent) != "":
		id, err := checkID("parent", parent)
		if err != nil {
			return nil, &ChoiceError{Field: "parent", Message: strings.TrimPrefix(err.Error(), "parent: ")}
		}
		q.Set("q", quote(id)+" in parents"+folderQ)
		q.Set("corpora", "allDrives")
		q.Set("includeItemsFromAllDrives", "true")
	case corpus == CorpusDrives:
		var drives struct {
			Drives []struct{ ID, Name string } `json:"drives"`
		}
		if err := c.GetJSON(ctx, "/drives", url.Values{"pageSize": {"100"}}, authHeader(c), &drives); err != nil {
			return nil, err
		}
		out := []Folder{}
		for _, d := range drives.Drives {
			out = append(out, Folder{ID: d.ID, Name: d.Name, Place: PlaceSharedDrive})
		}
		return out, nil
	case corpus == CorpusShared:
		q.Set("q", "sharedWithMe"+folderQ)
	default:
		q.Set("q", "'root' in parents"+folderQ)
	}
	var ans filesAnswer
	if err := getJSON(ctx, c, "/files", q, &ans); err != nil {
		return nil, err
	}
	out := []Folder{}
	for _, f := range ans.Files {
		out = append(out, Folder{ID: f.ID, Name: f.Name, Place: place})
	}
	return out, nil
}

// CheckFolder refuses a choice that is not a folder, is trashed, or is My
// Drive itself, and returns the folder.
func CheckFolder(ctx context.Context, c adapters.Conn, raw string) (Folder, error) {
	id, err := checkID(FieldFolderID, raw)
	if err != nil {
		return Folder{}, &ChoiceError{Field: FieldFolderID, Message: strings.TrimPrefix(err.Error(), FieldFolderID+": ")}
	}
	var root File
	if err := getJSON(ctx, c, "/files/root", url.Values{"fields": {"id"}}, &root); err != nil {
		return Folder{}, err
	}
	if id == "root" || id == root.ID {
		return Folder{}, &ChoiceError{Field: FieldFolderID, Message: "My Drive cannot be chosen: choose one folder in it, shared with you, or a shared drive"}
	}
	var f File
	err = getJSON(ctx, c, "/files/"+url.PathEscape(id), url.Values{"fields": {fileFields}}, &f)
	var he *adapters.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return Folder{}, &ChoiceError{Field: FieldFolderID, Message: "this login sees no folder " + id}
	}
	if err != nil {
		return Folder{}, err
	}
	if f.MimeType != FolderType || f.Trashed {
		return Folder{}, &ChoiceError{Field: FieldFolderID, Message: id + " is not a folder"}
	}
	place := PlaceMyDrive
	if f.DriveID != "" {
		place = PlaceSharedDrive
	}
	return Folder{ID: f.ID, Name: f.Name, Place: place}, nil
}

package qontotest

import (
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// The fake's attachment routes, as Qonto's Business API v2 has them:
// POST /v2/transactions/{id}/attachments takes multipart/form-data with one
// file part and an X-Qonto-Idempotency-Key header, answers success with an
// empty object, and processes the file in the background (it shows on the
// transaction's attachment list a few lists later); GET lists the
// transaction's attachments.

type pendingUpload struct {
	attachment map[string]any
	lists      int // attachment lists left before it shows
}

// Upload is one accepted POST, as received.
type Upload struct {
	Transaction, Key, FileName, PartType string
	Content                              []byte
}

func (s *Service) attach(w http.ResponseWriter, r *http.Request, id string) {
	known := false
	for _, tx := range s.txs {
		known = known || tx["id"] == id
	}
	if !known {
		raw(w, http.StatusNotFound, `{"errors":[{"code":"not_found","detail":"Transaction not found"}]}`)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		for i := range s.pending[id] {
			s.pending[id][i].lists--
		}
		var still []pendingUpload
		for _, p := range s.pending[id] {
			if p.lists <= 0 {
				s.attachments[id] = append(s.attachments[id], p.attachment)
			} else {
				still = append(still, p)
			}
		}
		s.pending[id] = still
		list := s.attachments[id]
		if list == nil {
			list = []map[string]any{}
		}
		writeJSON(w, map[string]any{"attachments": list, "meta": map[string]any{"current_page": 1, "next_page": nil, "total_count": len(list)}})
	case http.MethodPost:
		key := r.Header.Get("X-Qonto-Idempotency-Key")
		if key == "" {
			raw(w, http.StatusBadRequest, `{"errors":[{"code":"missing_idempotency_key","detail":"X-Qonto-Idempotency-Key header is required"}]}`)
			return
		}
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/form-data" {
			raw(w, http.StatusUnsupportedMediaType, `{"errors":[{"code":"unsupported_media_type","detail":"multipart/form-data expected"}]}`)
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		var up Upload
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				raw(w, http.StatusBadRequest, `{"errors":[{"code":"invalid","detail":"malformed multipart body"}]}`)
				return
			}
			if part.FormName() == "file" {
				up.FileName, up.PartType = part.FileName(), part.Header.Get("Content-Type")
				up.Content, _ = io.ReadAll(part)
			}
		}
		if up.Content == nil {
			raw(w, http.StatusUnprocessableEntity, `{"errors":[{"code":"invalid","detail":"file is missing","source":{"parameter":"file"}}]}`)
			return
		}
		if t := http.DetectContentType(up.Content); t != "application/pdf" && t != "image/png" && t != "image/jpeg" {
			raw(w, http.StatusUnprocessableEntity, `{"errors":[{"code":"invalid","detail":"file type is not supported","source":{"parameter":"file"}}]}`)
			return
		}
		up.Transaction, up.Key = id, key
		s.uploads = append(s.uploads, up)
		if !s.keys[key] {
			s.keys[key] = true
			n := len(s.uploads)
			att := map[string]any{"id": fmt.Sprintf("aa000000-0000-4000-8000-%012d", n), "file_name": up.FileName,
				"file_size": fmt.Sprint(len(up.Content)), "file_content_type": up.PartType, "created_at": Clock.Format("2006-01-02T15:04:05.000Z"),
				"url": "https://bucket.example/" + strings.ToLower(up.FileName) + "?X-Amz-Signature=abc", "probative_attachment": map[string]any{"status": "pending"}}
			lists := 2
			if n := s.slow[id]; n > 0 {
				lists = n
			}
			if s.never[id] {
				lists = 1 << 30
			}
			s.pending[id] = append(s.pending[id], pendingUpload{attachment: att, lists: lists})
		}
		raw(w, http.StatusOK, `{}`)
	default:
		raw(w, http.StatusMethodNotAllowed, `{"errors":[{"code":"method_not_allowed","detail":"Method not allowed"}]}`)
	}
}

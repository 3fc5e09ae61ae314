// Package errorreporttest is a Sentry ingestion endpoint on loopback for
// tests: it accepts envelopes as Sentry's servers do and keeps them.
package errorreporttest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Server keeps every envelope it receives.
type Server struct {
	*httptest.Server
	mu        sync.Mutex
	envelopes []string
}

// New starts the endpoint; it is closed with the test.
func New(t interface{ Cleanup(func()) }) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/envelope/") {
			http.NotFound(w, r)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, _ := io.ReadAll(body)
		s.mu.Lock()
		s.envelopes = append(s.envelopes, string(raw))
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.Close)
	return s
}

// DSN is a Sentry DSN naming this endpoint (project 42).
func (s *Server) DSN() string {
	return strings.Replace(s.URL, "http://", "http://publickey@", 1) + "/42"
}

// Received is every envelope received so far, joined by newlines.
func (s *Server) Received() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.envelopes, "\n")
}

// Events counts the error events received.
func (s *Server) Events() int {
	return strings.Count(s.Received(), `"event_id"`) / 2 // envelope header and event both carry it
}

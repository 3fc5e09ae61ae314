package mcpconformance

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connectors"
)

// Completer finishes a pending login; *connectors.Engine is one.
type Completer interface {
	BeginOAuth(ctx context.Context, id uuid.UUID, redirectURL string) (string, error)
	CompleteOAuth(ctx context.Context, state, code string) (uuid.UUID, error)
}

// Loopback is a redirect listener on 127.0.0.1 that completes logins with
// the engine when the authorization server redirects to it.
type Loopback struct {
	eng  Completer
	ln   net.Listener
	srv  *http.Server
	mu   sync.Mutex
	done chan error
}

// Listen opens the redirect listener on a random loopback port.
func Listen(eng Completer) (*Loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &Loopback{eng: eng, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", l.callback)
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln) //nolint:errcheck // ends with Close
	return l, nil
}

// RedirectURI is the URI to register and to send in authorization requests.
func (l *Loopback) RedirectURI() string {
	return fmt.Sprintf("http://127.0.0.1:%d/callback", l.ln.Addr().(*net.TCPAddr).Port)
}

// Close stops the listener.
func (l *Loopback) Close() error { return l.srv.Close() }

func (l *Loopback) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var err error
	if e := q.Get("error"); e != "" {
		err = fmt.Errorf("the authorization server refused the login (%.40s)", e)
	} else if err = checkIssuer(l.RedirectURI(), q); err == nil { // before the code is redeemed
		_, err = l.eng.CompleteOAuth(r.Context(), q.Get("state"), q.Get("code"))
	}
	if err != nil {
		http.Error(w, "login failed", http.StatusBadRequest)
	} else {
		_, _ = io.WriteString(w, "connected\n")
	}
	l.mu.Lock()
	if l.done != nil {
		select {
		case l.done <- err:
		default:
		}
	}
	l.mu.Unlock()
}

// Authorize runs one authorization-code login of a connection headlessly:
// the engine builds the authorization URL (state, S256 PKCE, resource), hc
// follows it with a GET, and the authorization server's redirect lands on
// the listener, which exchanges the code through the engine.
func (l *Loopback) Authorize(ctx context.Context, hc *http.Client, id uuid.UUID) error {
	done := make(chan error, 1)
	l.mu.Lock()
	l.done = done
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.done = nil
		l.mu.Unlock()
	}()
	authURL, err := l.eng.BeginOAuth(ctx, id, l.RedirectURI())
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("following the authorization URL: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	default:
		return fmt.Errorf("the authorization server answered HTTP %d without redirecting to the client", resp.StatusCode)
	}
}

var _ Completer = (*connectors.Engine)(nil)

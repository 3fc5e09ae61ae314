package dpop

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Transport is an http.RoundTripper that sends each request with a fresh
// DPoP proof when Key gives it a key for that request (requests without one
// pass through untouched). The proof carries ath when the request is
// authorised with "Authorization: DPoP <token>". Nonces a server supplies in
// DPoP-Nonce response headers are remembered per origin and put in later
// proofs; a use_dpop_nonce challenge (an authorization server's 400 with
// error "use_dpop_nonce", a resource server's 401 whose WWW-Authenticate
// DPoP challenge says error="use_dpop_nonce") is answered by sending the
// request once more with a new proof carrying the nonce. A request with a
// body is retried only when its body can be replayed (GetBody).
type Transport struct {
	Base http.RoundTripper // nil: http.DefaultTransport
	// Key returns the key to prove possession of for req, or nil for none.
	Key func(req *http.Request) *Key

	mu     sync.Mutex
	nonces map[string]string // origin → last nonce
}

// NewTransport returns a Transport that proves possession of one key on
// every request.
func NewTransport(base http.RoundTripper, k *Key) *Transport {
	return &Transport{Base: base, Key: func(*http.Request) *Key { return k }}
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

func origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

func (t *Transport) nonce(o string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nonces[o]
}

func (t *Transport) remember(o string, resp *http.Response) string {
	n := resp.Header.Get("DPoP-Nonce")
	if n == "" || len(n) > 512 {
		return ""
	}
	t.mu.Lock()
	if t.nonces == nil {
		t.nonces = map[string]string{}
	}
	t.nonces[o] = n
	t.mu.Unlock()
	return n
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var k *Key
	if t.Key != nil {
		k = t.Key(req)
	}
	if k == nil {
		return t.base().RoundTrip(req)
	}
	o := origin(req.URL)
	out, err := t.prove(req, k, t.nonce(o))
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.base().RoundTrip(out)
	if err != nil {
		return nil, err
	}
	n := t.remember(o, resp)
	if n == "" || !challenged(resp) {
		return resp, nil
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil // the body is spent: the caller sees the challenge
	}
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return resp, nil
		}
		again.Body = body
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	out, err = t.prove(again, k, n)
	if err != nil {
		closeBody(again)
		return nil, err
	}
	resp, err = t.base().RoundTrip(out)
	if err == nil {
		t.remember(o, resp)
	}
	return resp, err
}

// prove returns a clone of req with a fresh proof in its DPoP header.
func (t *Transport) prove(req *http.Request, k *Key, nonce string) (*http.Request, error) {
	tok := ""
	if scheme, v, ok := strings.Cut(req.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "DPoP") {
		tok = strings.TrimSpace(v)
	}
	p, err := Proof(k, req.Method, req.URL.String(), tok, nonce)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Header.Set("DPoP", p)
	return out, nil
}

// challenged reports whether resp, which carries a DPoP-Nonce header, asks
// for the request again with that nonce: an authorization server's 400
// {"error":"use_dpop_nonce"} (RFC 9449 8) or a resource server's 401 whose
// challenge says error="use_dpop_nonce" (RFC 9449 9; the code is DPoP's
// own, whatever scheme list surrounds it). A 400's body is read and put
// back for the caller.
func challenged(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		for _, v := range resp.Header.Values("WWW-Authenticate") {
			if strings.Contains(v, "use_dpop_nonce") {
				return true
			}
		}
	case http.StatusBadRequest:
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body = &replayed{Reader: io.MultiReader(bytes.NewReader(b), resp.Body), c: resp.Body}
		if err != nil {
			return false
		}
		var e struct {
			Error string `json:"error"`
		}
		return json.Unmarshal(b, &e) == nil && e.Error == "use_dpop_nonce"
	}
	return false
}

// replayed is a response body whose start was read already.
type replayed struct {
	io.Reader
	c io.Closer
}

func (r *replayed) Close() error { return r.c.Close() }

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// ErrNoKey is returned by helpers given no key.
var ErrNoKey = errors.New("dpop: no key")

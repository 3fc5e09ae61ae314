// Package dpop is the client side of OAuth 2.0 Demonstrating Proof of
// Possession (RFC 9449): an ES256 key, the proof JWT that binds one HTTP
// request to it, and a RoundTripper that puts a fresh proof on each request
// and answers a server's use_dpop_nonce challenge once with the nonce it
// supplied. Only the standard library is used.
//
// The private key is a secret like a refresh token: it is sealed with the
// credential it is bound to and never logged (Key's fmt and slog forms hide
// it).
package dpop

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/url"
	"strings"
	"time"
)

// Alg is the only signing algorithm this package uses.
const Alg = "ES256"

// Supported reports whether an authorization server that lists algs in its
// dpop_signing_alg_values_supported metadata accepts this package's proofs.
func Supported(algs []string) bool {
	for _, a := range algs {
		if a == Alg {
			return true
		}
	}
	return false
}

// Key is a P-256 key pair proofs are signed with.
type Key struct {
	priv *ecdsa.PrivateKey
	jwk  map[string]string // public JWK, header form
}

// GenerateKey returns a fresh key.
func GenerateKey() (*Key, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return newKey(priv)
}

func newKey(priv *ecdsa.PrivateKey) (*Key, error) {
	raw, err := priv.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil || len(raw) != 65 {
		return nil, errors.New("dpop: bad key")
	}
	return &Key{priv: priv, jwk: map[string]string{
		"kty": "EC", "crv": "P-256",
		"x": b64(raw[1:33]), "y": b64(raw[33:65]),
	}}, nil
}

// privateJWK is the sealed form of a Key.
type privateJWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	D   string `json:"d"`
}

// MarshalPrivate returns the key as a private JWK (RFC 7517), to be sealed.
func (k *Key) MarshalPrivate() ([]byte, error) {
	d, err := k.priv.Bytes()
	if err != nil {
		return nil, err
	}
	return json.Marshal(privateJWK{Kty: "EC", Crv: "P-256", X: k.jwk["x"], Y: k.jwk["y"], D: b64(d)})
}

// ParsePrivate reads a key MarshalPrivate wrote.
func ParsePrivate(b []byte) (*Key, error) {
	var j privateJWK
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, errors.New("dpop: the key is not a JWK")
	}
	if j.Kty != "EC" || j.Crv != "P-256" {
		return nil, errors.New("dpop: the key is not a P-256 JWK")
	}
	d, err1 := base64.RawURLEncoding.DecodeString(j.D)
	x, err2 := base64.RawURLEncoding.DecodeString(j.X)
	y, err3 := base64.RawURLEncoding.DecodeString(j.Y)
	if err1 != nil || err2 != nil || err3 != nil || len(d) != 32 || len(x) != 32 || len(y) != 32 {
		return nil, errors.New("dpop: the key's coordinates are malformed")
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		return nil, errors.New("dpop: the key is not a valid P-256 private key")
	}
	k, err := newKey(priv)
	if err != nil {
		return nil, err
	}
	if k.jwk["x"] != j.X || k.jwk["y"] != j.Y {
		return nil, errors.New("dpop: the key's public part does not match its private part")
	}
	return k, nil
}

// PublicJWK returns the public key as a JWK (a copy).
func (k *Key) PublicJWK() map[string]string {
	out := make(map[string]string, len(k.jwk))
	for n, v := range k.jwk {
		out[n] = v
	}
	return out
}

// Thumbprint is the key's RFC 7638 SHA-256 JWK thumbprint, base64url: what
// an authorization server binds a token to (cnf.jkt).
func (k *Key) Thumbprint() string {
	// Required members in lexicographic order, no whitespace.
	s := `{"crv":"P-256","kty":"EC","x":"` + k.jwk["x"] + `","y":"` + k.jwk["y"] + `"}`
	h := sha256.Sum256([]byte(s))
	return b64(h[:])
}

// String hides the key.
func (k *Key) String() string { return "dpop.Key{" + k.Thumbprint() + "}" }

// Format makes every fmt verb use String.
func (k *Key) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, k.String()) }

// LogValue makes slog print the redacted form.
func (k *Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// AccessTokenHash is the ath claim of a proof presented with accessToken.
func AccessTokenHash(accessToken string) string {
	h := sha256.Sum256([]byte(accessToken))
	return b64(h[:])
}

// HTU is the htu claim for a request URL: the URL without query and fragment.
func HTU(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment, c.User = "", false, "", "", nil
	return c.String()
}

// now is the clock of proofs (iat).
var now = time.Now

// Proof returns a compact DPoP proof JWT for one request: method htm at URL
// htu (query and fragment are dropped), with ath when accessToken is set and
// nonce when a server supplied one.
func Proof(k *Key, htm, htu, accessToken, nonce string) (string, error) {
	if k == nil {
		return "", ErrNoKey
	}
	u, err := url.Parse(htu)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", errors.New("dpop: htu is not an absolute URL")
	}
	var jti [16]byte
	_, _ = rand.Read(jti[:])
	header := struct {
		Typ string            `json:"typ"`
		Alg string            `json:"alg"`
		JWK map[string]string `json:"jwk"`
	}{"dpop+jwt", Alg, k.jwk}
	claims := struct {
		JTI   string `json:"jti"`
		HTM   string `json:"htm"`
		HTU   string `json:"htu"`
		IAT   int64  `json:"iat"`
		ATH   string `json:"ath,omitempty"`
		Nonce string `json:"nonce,omitempty"`
	}{JTI: b64(jti[:]), HTM: strings.ToUpper(htm), HTU: HTU(u), IAT: now().Unix(), Nonce: nonce}
	if accessToken != "" {
		claims.ATH = AccessTokenHash(accessToken)
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := b64(hb) + "." + b64(cb)
	digest := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, k.priv, digest[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64) // JWS ES256: R || S, 32 bytes each (RFC 7518 3.4)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signing + "." + b64(sig), nil
}

// Claims are a verified proof's claims.
type Claims struct {
	JTI   string `json:"jti"`
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	IAT   int64  `json:"iat"`
	ATH   string `json:"ath,omitempty"`
	Nonce string `json:"nonce,omitempty"`
	// JKT is the thumbprint of the header's key.
	JKT string `json:"-"`
}

// Verify checks a proof as a server does (RFC 9449 4.3): its shape, typ and
// alg, that the header's key is a public P-256 key, the signature, and the
// presence of jti, htm, htu and iat. It does not check htm, htu, iat's
// window, ath or nonce against the request: the caller compares Claims.
// It serves this package's tests and the test servers of others.
func Verify(proof string) (Claims, error) {
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		return Claims{}, errors.New("dpop: proof is not a compact JWS")
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return Claims{}, errors.New("dpop: proof is not base64url")
	}
	var h struct {
		Typ string         `json:"typ"`
		Alg string         `json:"alg"`
		JWK map[string]any `json:"jwk"`
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return Claims{}, errors.New("dpop: proof header is not JSON")
	}
	if h.Typ != "dpop+jwt" || h.Alg != Alg {
		return Claims{}, errors.New("dpop: proof typ or alg is wrong")
	}
	if _, ok := h.JWK["d"]; ok {
		return Claims{}, errors.New("dpop: proof header holds a private key")
	}
	kty, _ := h.JWK["kty"].(string)
	crv, _ := h.JWK["crv"].(string)
	xs, _ := h.JWK["x"].(string)
	ys, _ := h.JWK["y"].(string)
	x, errx := base64.RawURLEncoding.DecodeString(xs)
	y, erry := base64.RawURLEncoding.DecodeString(ys)
	if kty != "EC" || crv != "P-256" || errx != nil || erry != nil || len(x) != 32 || len(y) != 32 {
		return Claims{}, errors.New("dpop: proof header key is not a P-256 JWK")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return Claims{}, errors.New("dpop: proof header key is not on P-256")
	}
	if len(sig) != 64 {
		return Claims{}, errors.New("dpop: proof signature has the wrong length")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return Claims{}, errors.New("dpop: proof signature does not verify")
	}
	var c Claims
	if err := json.Unmarshal(cb, &c); err != nil {
		return Claims{}, errors.New("dpop: proof claims are not JSON")
	}
	if c.JTI == "" || c.HTM == "" || c.HTU == "" || c.IAT == 0 {
		return Claims{}, errors.New("dpop: proof lacks jti, htm, htu or iat")
	}
	c.JKT = (&Key{jwk: map[string]string{"x": xs, "y": ys}}).Thumbprint()
	return c, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

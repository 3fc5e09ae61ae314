// Package secret encrypts credentials at rest with AES-256-GCM under a keyring
// read from GUILDS_ENCRYPTION_KEY.
//
// # Key format
//
// GUILDS_ENCRYPTION_KEY is a comma-separated list of entries "kid:base64key".
// A kid is 1 to 32 characters from [A-Za-z0-9_.-]; a key is 32 random bytes in
// standard or URL-safe base64, padded or not. The first entry is the active key:
// every new ciphertext is sealed with it. The other entries only open existing
// ciphertexts, which is how a key is rotated:
//
//  1. prepend the new key:   GUILDS_ENCRYPTION_KEY=k2:NEW...,k1:OLD...
//  2. run `guilds keys rotate` (re-encrypts every stored row under k2)
//  3. drop the old key:      GUILDS_ENCRYPTION_KEY=k2:NEW...
//
// A bare base64 key with no "kid:" prefix is accepted too and gets the kid "k1".
//
// # Ciphertext layout
//
// version byte 0x01 | kid length (1 byte) | kid | 12-byte nonce | GCM sealed data.
// The kid is authenticated with the caller's additional data, so a ciphertext
// cannot be replayed under another kid or for another record (callers pass the
// record's id as aad).
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	// KeySize is the length of an AES-256 key in bytes.
	KeySize = 32
	// DefaultKeyID is the kid given to a bare key without a "kid:" prefix.
	DefaultKeyID = "k1"
	// DevKeyFile is the file under the data directory where `guilds dev` keeps its key.
	DevKeyFile = "encryption.key"

	formatV1  = 0x01
	nonceSize = 12
	maxKIDLen = 32
)

var (
	// ErrNoKey: GUILDS_ENCRYPTION_KEY is empty.
	ErrNoKey = errors.New("GUILDS_ENCRYPTION_KEY is not set")
	// ErrUnknownKey: the ciphertext names a kid the keyring does not hold.
	ErrUnknownKey = errors.New("secret: ciphertext key id is not in GUILDS_ENCRYPTION_KEY")
	// ErrDecrypt: the ciphertext is malformed, tampered with, or bound to other aad.
	ErrDecrypt = errors.New("secret: cannot decrypt (corrupt ciphertext or wrong record)")
)

// UnknownKeyError is what Open returns for a ciphertext sealed under a key
// id the keyring lacks (the old key was dropped before `guilds keys rotate`
// finished). It matches ErrUnknownKey with errors.Is; its message names the
// key id and the remedy, never key material.
type UnknownKeyError struct{ KeyID string }

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("a stored secret is sealed with key id %q, which GUILDS_ENCRYPTION_KEY does not hold: "+
		"add that key back as a non-active entry and run `guilds keys rotate`", e.KeyID)
}

// Is makes errors.Is(err, ErrUnknownKey) hold.
func (e *UnknownKeyError) Is(target error) bool { return target == ErrUnknownKey }

// Has reports whether the keyring holds a key id.
func (kr *Keyring) Has(id string) bool { return kr.byID[id] != nil }

type key struct {
	id   string
	aead cipher.AEAD
}

// Keyring holds the active key and the older keys that still decrypt. It is
// safe for concurrent use.
type Keyring struct {
	active *key
	byID   map[string]*key
}

// ParseKeyring parses the GUILDS_ENCRYPTION_KEY format described in the package
// documentation. Error messages never include key material.
func ParseKeyring(s string) (*Keyring, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ErrNoKey
	}
	kr := &Keyring{byID: map[string]*key{}}
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("GUILDS_ENCRYPTION_KEY: entry %d is empty", i+1)
		}
		id, b64, ok := strings.Cut(part, ":")
		if !ok {
			id, b64 = DefaultKeyID, part
		}
		if !validKID(id) {
			return nil, fmt.Errorf("GUILDS_ENCRYPTION_KEY: entry %d: key id must be 1-%d characters of [A-Za-z0-9_.-]", i+1, maxKIDLen)
		}
		raw, err := decodeKey(b64)
		if err != nil {
			return nil, fmt.Errorf("GUILDS_ENCRYPTION_KEY: key %q: %w", id, err)
		}
		if _, dup := kr.byID[id]; dup {
			return nil, fmt.Errorf("GUILDS_ENCRYPTION_KEY: key id %q appears twice", id)
		}
		k, err := newKey(id, raw)
		if err != nil {
			return nil, err
		}
		kr.byID[id] = k
		if kr.active == nil {
			kr.active = k
		}
	}
	return kr, nil
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("must decode to %d bytes, got %d", KeySize, len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("is not valid base64")
}

func validKID(id string) bool {
	if id == "" || len(id) > maxKIDLen {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

func newKey(id string, raw []byte) (*key, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &key{id: id, aead: aead}, nil
}

// ActiveKeyID is the kid new ciphertexts are sealed with.
func (kr *Keyring) ActiveKeyID() string { return kr.active.id }

// KeyIDs lists every kid of the keyring, the active one first.
func (kr *Keyring) KeyIDs() []string {
	out := []string{kr.active.id}
	for id := range kr.byID {
		if id != kr.active.id {
			out = append(out, id)
		}
	}
	return out
}

// Seal encrypts plaintext under the active key, bound to aad.
func (kr *Keyring) Seal(plaintext, aad []byte) ([]byte, error) {
	k := kr.active
	out := make([]byte, 0, 2+len(k.id)+nonceSize+len(plaintext)+k.aead.Overhead())
	out = append(out, formatV1, byte(len(k.id))) //nolint:gosec // G115: key ids are at most maxKIDLen (32) bytes, checked when parsed
	out = append(out, k.id...)
	nonce := make([]byte, nonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out = append(out, nonce...)
	return k.aead.Seal(out, nonce, plaintext, bindAAD(k.id, aad)), nil
}

// Open decrypts a ciphertext made by Seal with the same aad, under whichever
// key of the keyring its kid names.
func (kr *Keyring) Open(ciphertext, aad []byte) ([]byte, error) {
	id, body, err := split(ciphertext)
	if err != nil {
		return nil, err
	}
	k := kr.byID[id]
	if k == nil {
		return nil, &UnknownKeyError{KeyID: id}
	}
	if len(body) < nonceSize+k.aead.Overhead() {
		return nil, ErrDecrypt
	}
	pt, err := k.aead.Open(nil, body[:nonceSize], body[nonceSize:], bindAAD(id, aad))
	if err != nil {
		return nil, ErrDecrypt
	}
	return pt, nil
}

// KeyID reports the kid a ciphertext was sealed with.
func KeyID(ciphertext []byte) (string, error) {
	id, _, err := split(ciphertext)
	return id, err
}

// NeedsRotation reports whether a ciphertext was sealed with a key other than the active one.
func (kr *Keyring) NeedsRotation(ciphertext []byte) bool {
	id, _, err := split(ciphertext)
	return err != nil || id != kr.active.id
}

func split(ct []byte) (kid string, body []byte, err error) {
	if len(ct) < 2 || ct[0] != formatV1 {
		return "", nil, ErrDecrypt
	}
	n := int(ct[1])
	if n == 0 || len(ct) < 2+n {
		return "", nil, ErrDecrypt
	}
	return string(ct[2 : 2+n]), ct[2+n:], nil
}

func bindAAD(kid string, aad []byte) []byte {
	b := make([]byte, 0, len(kid)+1+len(aad))
	b = append(b, kid...)
	b = append(b, 0)
	return append(b, aad...)
}

// GenerateKey returns a new random key entry "kid:base64key" for GUILDS_ENCRYPTION_KEY.
func GenerateKey(kid string) (string, error) {
	if !validKID(kid) {
		return "", fmt.Errorf("secret: invalid key id %q", kid)
	}
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return kid + ":" + base64.StdEncoding.EncodeToString(raw), nil
}

// DevKeyring returns the development keyring kept in dataDir/encryption.key,
// creating the file with a random key (mode 0600) the first time. Concurrent
// first calls agree on one key. Production deployments set GUILDS_ENCRYPTION_KEY
// instead.
func DevKeyring(dataDir string) (*Keyring, error) {
	path := filepath.Join(dataDir, DevKeyFile)
	if b, err := os.ReadFile(path); err == nil { //nolint:gosec // G304: the operator's data directory
		return parseDevKey(path, b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	entry, err := GenerateKey("dev1")
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dataDir, ".encryption.key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after a successful link
	if _, err := tmp.WriteString(entry + "\n"); err != nil {
		_ = tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	// Link fails when another process created the file first; then use theirs.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	b, err := os.ReadFile(path) //nolint:gosec // G304: the operator's data directory
	if err != nil {
		return nil, err
	}
	return parseDevKey(path, b)
}

func parseDevKey(path string, b []byte) (*Keyring, error) {
	kr, err := ParseKeyring(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kr, nil
}

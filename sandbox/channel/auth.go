package channel

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The handshake. Neither side sends the token: the client sends a magic and
// a nonce; the server answers with its nonce and a MAC over both under the
// token; the client checks it (an impostor listening on the socket learns
// nothing and gets no command) and answers with its own MAC, which the
// server checks before it reads a request.
const (
	magic    = "GUILDSC1"
	nonceLen = 32
	macLen   = sha256.Size
)

// TokenLen is the length of a token's text form (hex of 32 random bytes).
const TokenLen = 64

var (
	// ErrRefused: the server did not accept the client's proof.
	ErrRefused = errors.New("channel: the sandbox refused the token")
	// ErrImpostor: whatever listens on the socket does not hold the token.
	ErrImpostor = errors.New("channel: the socket's server could not prove the sandbox's token")
)

// NewToken returns a fresh random token.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ParseToken checks a token read from a file.
func ParseToken(s string) (string, error) {
	s = strings.TrimSpace(s)
	if _, err := hex.DecodeString(s); err != nil || len(s) != TokenLen {
		return "", fmt.Errorf("channel: a token is %d hex digits", TokenLen)
	}
	return s, nil
}

func mac(token, side string, a, b []byte) []byte {
	h := hmac.New(sha256.New, []byte(token))
	h.Write([]byte(side))
	h.Write(a)
	h.Write(b)
	return h.Sum(nil)
}

// clientHello proves the client's side; rw is the fresh connection.
func clientHello(rw io.ReadWriter, token string) error {
	hello := make([]byte, len(magic)+nonceLen)
	copy(hello, magic)
	cn := hello[len(magic):]
	_, _ = rand.Read(cn)
	if _, err := rw.Write(hello); err != nil {
		return err
	}
	reply := make([]byte, nonceLen+macLen)
	if _, err := io.ReadFull(rw, reply); err != nil {
		return fmt.Errorf("%w: %v", ErrImpostor, err)
	}
	sn := reply[:nonceLen]
	if !hmac.Equal(reply[nonceLen:], mac(token, "server", cn, sn)) {
		return ErrImpostor
	}
	_, err := rw.Write(mac(token, "client", cn, sn))
	return err
}

// serverHello checks the client's proof.
func serverHello(rw io.ReadWriter, token string) error {
	hello := make([]byte, len(magic)+nonceLen)
	if _, err := io.ReadFull(rw, hello); err != nil {
		return err
	}
	if string(hello[:len(magic)]) != magic {
		return fmt.Errorf("%w: not a channel client", ErrFraming)
	}
	cn := hello[len(magic):]
	sn := make([]byte, nonceLen)
	_, _ = rand.Read(sn)
	if _, err := rw.Write(append(sn, mac(token, "server", cn, sn)...)); err != nil {
		return err
	}
	proof := make([]byte, macLen)
	if _, err := io.ReadFull(rw, proof); err != nil {
		return err
	}
	if !hmac.Equal(proof, mac(token, "client", cn, sn)) {
		return ErrRefused
	}
	return nil
}

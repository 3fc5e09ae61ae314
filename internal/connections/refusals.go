package connections

import (
	"errors"
	"strings"

	"github.com/guilds/guilds/internal/connectors"
)

// What a Checker answers when a server or service refuses a login, whichever
// serves it (the MCP pool's Checker, the adapter host). The API maps each to
// its status and code.

// ErrKeyRejected: the server refused the key (a 401, or a listing that says so).
var ErrKeyRejected = errors.New("the server rejected the key")

// ErrKeyUnchecked: the server could not be reached to check a key.
var ErrKeyUnchecked = errors.New("the server could not be reached to check the key; try again")

// ErrAddressRefused: the server's address is one the outbound policy refuses.
var ErrAddressRefused = errors.New("the server's address is refused: private, loopback and cloud metadata addresses are not called unless GUILDS_OAUTH_ALLOW_PRIVATE=1")

// KeyRejectedError is a refused key of a multi-field login, naming the
// field; it matches ErrKeyRejected.
type KeyRejectedError struct{ Field string }

func (e *KeyRejectedError) Error() string {
	return "the server rejected the key " + e.Field
}
func (e *KeyRejectedError) Is(target error) bool { return target == ErrKeyRejected }

// TrimKey readies a pasted key for a check: trimmed, an empty one is
// ErrKeyRejected, and one the engine would refuse to store
// (connectors.CheckKey) is refused before it is sent anywhere.
func TrimKey(key string) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", ErrKeyRejected
	}
	if err := connectors.CheckKey(key); err != nil {
		return "", invalid("key", err.Error())
	}
	return key, nil
}

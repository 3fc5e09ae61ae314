package catalog

// Auth is how a catalog server's login is made (the auth column).
type Auth string

// Catalog auth kinds.
const (
	// AuthNone: no credential, or configured headers/env values only.
	AuthNone Auth = "none"
	// AuthToken: an API key the operator pastes.
	AuthToken Auth = "token"
	// AuthOAuth: a browser OAuth login with refresh.
	AuthOAuth Auth = "oauth"
)

// Valid reports whether a is one of the auth kinds.
func (a Auth) Valid() bool {
	switch a {
	case AuthNone, AuthToken, AuthOAuth:
		return true
	}
	return false
}

package config

import (
	"regexp"
	"strings"
)

var (
	// scheme://user:password@ — greedy up to the last @ of the token, so a
	// password holding an unencoded @ or / is hidden whole.
	urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*:)\S*@`)
	// ?password=… or &sslpassword=… in a URL's query.
	queryPassword = regexp.MustCompile(`(?i)([?&][a-z_]*password=)[^&#\s]*`)
	// password=… in a libpq key=value DSN: a quoted value (with \' escapes)
	// or a bare one up to the next space.
	dsnPassword = regexp.MustCompile("(?i)(^|[\\s`\"(])([a-z_]*password\\s*=\\s*)('(?:[^'\\\\]|\\\\.)*'?|(?:[^\\s\\\\]|\\\\.)*)")
)

// Redact hides the passwords of database and Redis addresses, in both the
// URL form (postgres://u:pw@h/db, redis://:pw@h:6379/0, ?password=pw) and
// the key=value form (host=h password='p w'). It takes a bare address or any
// text that quotes one, such as an error message, and is what every printed
// or returned address goes through.
func Redact(s string) string {
	s = urlPassword.ReplaceAllString(s, "${1}***@")
	s = queryPassword.ReplaceAllString(s, "${1}***")
	return dsnPassword.ReplaceAllString(s, "${1}${2}***")
}

// RedactWith is Redact that also hides each of the given secret values
// wherever they appear (a server's error that echoes the password it was sent).
func RedactWith(s string, secrets ...string) string {
	for _, v := range secrets {
		if v != "" {
			s = strings.ReplaceAll(s, v, "***")
		}
	}
	return Redact(s)
}

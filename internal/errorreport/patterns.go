package errorreport

import "regexp"

// Credential shapes redacted from every event besides the exact values the
// reporter knows: an error can quote a value that no redaction set holds (a
// token a remote service sent back, a password in a connection string).
var credentialPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Authorization schemes: "Bearer abc…", "Basic …".
	{regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}`), "$1 [REDACTED]"},
	// key=value and "key": "value" pairs whose name says credential.
	{regexp.MustCompile(`(?i)((?:access|refresh|id)?_?token|api[_-]?key|secret|password|passwd|pwd|authorization|client_secret|code_verifier)("?\s*[:=]\s*"?)[^\s"'&,;}]{4,}`), "$1$2[REDACTED]"},
	// The password of a URL's userinfo.
	{regexp.MustCompile(`(://[^/\s:@]+:)[^@\s/]+@`), "$1[REDACTED]@"},
	// guilds API tokens and the common provider key prefixes.
	{regexp.MustCompile(`\b(gld|sk|sk-or|pk|ghs|ghu|gho|xoxb|xoxp)[-_][A-Za-z0-9_-]{8,}`), "[REDACTED]"},
	// JSON Web Tokens.
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), "[REDACTED]"},
}

func scrubPatterns(s string) string {
	for _, p := range credentialPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

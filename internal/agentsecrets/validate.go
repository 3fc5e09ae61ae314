package agentsecrets

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/validation"
)

// MaxValueBytes is the longest value a secret holds.
const MaxValueBytes = 4096

var namePattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// reserved are names a shell command's environment already sets, or that
// change how bash and the dynamic loader behave: a secret may not take one.
var reserved = map[string]bool{
	"HOME": true, "PATH": true, "LANG": true, "PAGER": true, "GIT_PAGER": true, "GIT_TERMINAL_PROMPT": true,
	"NO_COLOR": true, "TERM": true, "DEBIAN_FRONTEND": true, "SHELL": true, "USER": true, "PWD": true,
	"OLDPWD": true, "IFS": true, "ENV": true, "BASH_ENV": true, "SHELLOPTS": true, "BASHOPTS": true,
	"PS4": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LC_ALL": true,
}

// CheckName refuses a name that cannot be a secret's, under field.
func CheckName(p *validation.Problems, field, name string) {
	switch {
	case name == "":
		p.Add(field, "is required")
	case !namePattern.MatchString(name):
		p.Add(field, "must match ^[A-Z][A-Z0-9_]{0,63}$ (an environment variable name in capitals)")
	case reserved[name] || strings.HasPrefix(name, "GUILD_") || strings.HasPrefix(name, "GUILDS_"):
		p.Add(field, "%s is reserved: the sandbox sets it itself", name)
	}
}

// CheckValue refuses a value that cannot be stored, under field. It never
// quotes the value.
func CheckValue(p *validation.Problems, field, value string) {
	switch {
	case value == "":
		p.Add(field, "is required")
	case len(value) > MaxValueBytes:
		p.Add(field, "must be at most %d bytes", MaxValueBytes)
	case !utf8.ValidString(value) || strings.ContainsRune(value, 0):
		p.Add(field, "must be UTF-8 text without NUL bytes (it becomes an environment variable)")
	default:
		// A shorter value would be left out of the runs' redaction set.
		if err := tools.CheckRedactable(value); err != nil {
			p.Add(field, "%s", err.Error())
		}
	}
}

// ValidName reports whether name may name a secret.
func ValidName(name string) bool {
	var p validation.Problems
	CheckName(&p, "name", name)
	return p.Err() == nil
}

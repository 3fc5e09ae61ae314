// Package xpost reads the references to X posts that the X and TwitterAPI.io
// adapters both take: a post id, or a status URL from x.com, twitter.com or
// a mirror.
package xpost

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

var (
	digits    = regexp.MustCompile(`^[0-9]{1,25}$`)
	statusSeg = regexp.MustCompile(`/status(?:es)?/([0-9]{1,25})`)
)

// ID returns the post id s names.
func ID(s string) (string, error) {
	s = strings.TrimSpace(s)
	if digits.MatchString(s) {
		return s, nil
	}
	if u, err := url.Parse(s); err == nil && u.Path != "" {
		if m := statusSeg.FindStringSubmatch(u.Path); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("%q is neither a post id nor a status URL", s)
}

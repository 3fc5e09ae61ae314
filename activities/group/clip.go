package group

import (
	"strings"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/groupchat"
)

// clipMessage trims a final answer and cuts one longer than a chat message
// may be, saying so at its end.
func clipMessage(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= groupchat.MaxContent {
		return s
	}
	const more = "\n[the rest of this answer was cut at the chat's message size]"
	return string([]rune(s)[:groupchat.MaxContent-utf8.RuneCountInString(more)]) + more
}

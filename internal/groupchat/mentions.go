package groupchat

import (
	"regexp"
	"strings"
)

// mentionPattern finds @name at the start of the text or after a character
// that cannot end a word, so an e-mail address is no mention.
var mentionPattern = regexp.MustCompile(`(?:^|[^\w@])@([\p{L}\p{N}][\p{L}\p{N}_.-]*)`)

// parseMentions returns every distinct @name of text, in order of first
// appearance, with a trailing dot or hyphen (end of a sentence) removed.
func parseMentions(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range mentionPattern.FindAllStringSubmatch(text, -1) {
		name := strings.TrimRight(m[1], ".-")
		if name == "" || seen[strings.ToLower(name)] {
			continue
		}
		seen[strings.ToLower(name)] = true
		out = append(out, name)
	}
	return out
}

// mentionKey is how an agent's name is written after an @: case folded, with
// spaces as hyphens ("Research Bot" is @research-bot).
func mentionKey(name string) string {
	return strings.ToLower(strings.Join(strings.Fields(name), "-"))
}

// resolveMentions matches the @names of text against the guild's agents.
func resolveMentions(text string, agents []Agent) []Mention {
	byKey := map[string]string{}
	for _, a := range agents {
		byKey[mentionKey(a.Name)] = a.ID
		byKey[strings.ReplaceAll(mentionKey(a.Name), "-", "_")] = a.ID
	}
	out := []Mention{}
	seen := map[string]bool{}
	for _, name := range parseMentions(text) {
		id := byKey[strings.ToLower(name)]
		if id != "" && seen[id] {
			continue // another spelling of an agent already named
		}
		seen[id] = true
		out = append(out, Mention{Name: name, AgentID: id})
	}
	return out
}

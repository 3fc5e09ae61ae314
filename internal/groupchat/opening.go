package groupchat

import (
	"fmt"
	"strings"
)

// maxOpeningBytes bounds the chat history a run opens with; older messages
// are left out first.
const maxOpeningBytes = 60_000

// Opening is the first user message of a group-triggered run: who the agent
// is in the chat, the selected history (oldest first, ending with the
// message it answers) and what happens to its answer.
func Opening(agentName string, history []Message, m Message) string {
	lines := make([]string, 0, len(history))
	size := 0
	for i := len(history) - 1; i >= 0; i-- {
		h := history[i]
		line := fmt.Sprintf("[#%d] %s (%s, %s): %s", h.Seq, h.Author.Name, h.Author.Kind,
			h.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), h.Content)
		if size+len(line) > maxOpeningBytes && len(lines) > 0 {
			break
		}
		size += len(line) + 1
		lines = append(lines, line)
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You are @%s, taking part in your guild's group chat.\n\n", mentionKey(agentName))
	fmt.Fprintf(&b, "Recent messages, oldest first:\n%s\n\n", strings.Join(lines, "\n"))
	fmt.Fprintf(&b, "Answer message #%d from %s. Your final answer is posted into the chat as your message; "+
		"mention another agent as @name to ask it something.", m.Seq, m.Author.Name)
	return b.String()
}

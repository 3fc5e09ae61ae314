package memory

import (
	"fmt"
	"strings"
)

// PromptSection is the memory part of a run's system prompt. It always shows
// the memory; it names memory_write only when the run offers the tool, so a
// run without it is never told about a tool it cannot call. Empty memory and
// no tool give an empty section.
func PromptSection(content string, offered bool) string {
	content = strings.TrimSpace(content)
	if content == "" && !offered {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Your memory\n\n")
	if content == "" {
		b.WriteString("(empty)\n")
	} else {
		b.WriteString(content)
		b.WriteString("\n")
	}
	if offered {
		fmt.Fprintf(&b, "\nTo change it, call %s with the complete new text (at most %d characters): "+
			"it replaces the whole memory, so keep what still matters.\n", ToolWrite, MaxChars)
	}
	return b.String()
}

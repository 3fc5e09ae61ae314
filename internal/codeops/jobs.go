package codeops

import (
	"fmt"
	"io"
)

// JobArg is the hidden first argument with which guilds-code re-executes
// itself as the supervisor of a background command.
const JobArg = "__job"

// SuperviseJob is the supervisor's entry point.
func SuperviseJob(args []string, stderr io.Writer) int {
	_, _ = fmt.Fprintln(stderr, "guilds-code: background jobs are not built yet")
	return 2
}

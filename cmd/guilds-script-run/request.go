package main

import (
	"github.com/guilds/guilds/internal/codeops"
	"github.com/guilds/guilds/internal/codeproto"
)

// maxRequestFile bounds a request file: the arguments and the agent's
// secrets are all it holds.
const maxRequestFile = 4 << 20

func readRequest(arg string) (codeproto.Request, error) {
	return codeops.ReadRequest(arg, maxRequestFile)
}

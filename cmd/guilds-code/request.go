package main

import (
	"github.com/guilds/guilds/internal/codeops"
	"github.com/guilds/guilds/internal/codeproto"
)

// maxRequestFile bounds a request file (a file_write's content is the
// largest part).
const maxRequestFile = 32 << 20

func readRequest(arg string) (codeproto.Request, error) {
	return codeops.ReadRequest(arg, maxRequestFile)
}

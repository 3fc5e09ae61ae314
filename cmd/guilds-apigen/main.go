// Command guilds-apigen writes the operator app's API client from the API's
// route table (go generate ./internal/webapp).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/guilds/guilds/api"
)

func main() {
	out := flag.String("o", "internal/webapp/assets/api.gen.js", "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, api.New(api.Deps{}).ClientJS(), 0o644); err != nil { //nolint:gosec // a source file of the repository
		fmt.Fprintln(os.Stderr, "guilds-apigen:", err)
		os.Exit(1)
	}
}

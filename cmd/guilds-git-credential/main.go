// Command guilds-git-credential is git's credential helper for GitHub in an
// agent's sandbox: for "get" it answers the installation token of the
// repository git talks to (useHttpPath names it) from the tokens the
// orchestrator wrote for this generation (/run/guilds/git-tokens.json); it
// stores and erases nothing. A repository without a token gets no answer,
// and git asks no one else (terminal prompts are off).
//
// Run as "guilds-git-credential relay" it makes sure the relay from
// gittokens.RelayAddr to the worker's GitHub proxy socket (named in the
// file) runs in this sandbox, starting "guilds-browser --relay" detached
// when nothing answers, and returns; a file without a proxy needs none.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/githubapp/gittokens"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: guilds-git-credential get|store|erase (git runs it as a credential helper)")
		os.Exit(2)
	}
	if os.Args[1] == gittokens.RelayArg {
		if err := ensureRelay(gittokens.Locate()); err != nil {
			fmt.Fprintln(os.Stderr, "guilds-git-credential: the relay to GitHub:", err)
			os.Exit(1)
		}
		return
	}
	if os.Args[len(os.Args)-1] != "get" {
		_, _ = io.Copy(io.Discard, os.Stdin) // store and erase: nothing is kept here
		return
	}
	if err := get(os.Stdin, os.Stdout, gittokens.Locate(), time.Now()); err != nil {
		fmt.Fprintln(os.Stderr, "guilds-git-credential:", err)
	}
}

// get answers one request of git's credential protocol.
func get(in io.Reader, out io.Writer, path string, now time.Time) error {
	fields := map[string]string{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			fields[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	f, err := gittokens.Read(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // no tokens this generation: git gets no answer
		}
		return err
	}
	t, ok := f.For(fields["protocol"], fields["host"], fields["path"])
	if !ok {
		return nil
	}
	if !t.ExpiresAt.IsZero() && now.After(t.ExpiresAt) {
		return fmt.Errorf("the token of %s has expired; the next shell call gets a fresh one", t.Path)
	}
	_, err = fmt.Fprintf(out, "username=%s\npassword=%s\n", gittokens.Username, t.Token)
	return err
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/guilds/guilds/internal/adapters/pinnedprices"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
)

// keyReader is where a key login's fields come from: stdin, one line each
// (a prompt on a terminal), or, with -values, one JSON object naming them.
type keyReader struct {
	in   io.Reader
	json bool
}

// maxValuesJSON bounds the -values object read from stdin.
const maxValuesJSON = 64 << 10

// connectKey reads the provider's key or configuration fields from stdin
// and connects the login with them, checked as the API checks them.
func connectKey(ctx context.Context, svc *connections.Service, c connectors.Connection, kr keyReader, stderr io.Writer) error {
	// A Pinned prices login is a key plus the coins it quotes; the terminal
	// form takes one key, so that Connect stays with the API's.
	srv, err := grants.LoadServerRoute(ctx, svc.DB, c.ServerID.String())
	if err != nil {
		return err
	}
	if srv.Adapter == pinnedprices.Name {
		return fmt.Errorf("%s needs its coins with the key: connect it with POST /api/mcp/connect {\"key\", \"coins\": [...]}", c.ServerSlug)
	}
	fields, err := svc.Engine.KeyFields(ctx, c.ID)
	if err != nil {
		return err
	}
	var values map[string]string
	if kr.json {
		values, err = readValuesJSON(kr.in, fields)
	} else {
		values, err = readValueLines(kr.in, c.ServerSlug, fields, stderr)
	}
	if err != nil {
		return err
	}
	r, err := svc.ConnectKey(ctx, c.ID.String(), values, audit.ActorTerminal)
	if srv.Kind == catalog.KindRemote || srv.Kind == catalog.KindAdapter {
		// The same check as the API's: the key or values must list the
		// server's tools (an adapter asks its service instead).
		if err != nil {
			return fmt.Errorf("%s: %w", c.ServerSlug, err)
		}
		fmt.Fprintf(stderr, "%d tools listed\n", r.Tools)
		return nil
	}
	if err != nil {
		return err
	}
	if r.AccountHint != "" {
		fmt.Fprintf(stderr, "account: %s\n", r.AccountHint)
	}
	return nil
}

// readValuesJSON reads one JSON object of string values from stdin. Which
// fields are required or unknown is the connect service's check, which
// names each one.
func readValuesJSON(in io.Reader, fields []connectors.KeyField) (map[string]string, error) {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = `"` + f.Name + `":"…"`
	}
	want := fmt.Errorf("-values reads a JSON object of the fields on stdin, each a string: {%s}", strings.Join(names, ","))
	raw, err := io.ReadAll(io.LimitReader(in, maxValuesJSON+1))
	if err != nil {
		return nil, fmt.Errorf("reading the values from stdin: %v", err)
	}
	if len(raw) > maxValuesJSON {
		return nil, fmt.Errorf("the values on stdin are larger than %d KiB", maxValuesJSON>>10)
	}
	var values map[string]string
	dec := json.NewDecoder(bytes.NewReader(raw))
	// The decoder's own message could quote a value; the terminal says
	// what it wants instead.
	if err := dec.Decode(&values); err != nil || values == nil || dec.More() {
		return nil, want
	}
	return values, nil
}

// readValueLines reads the fields one line each (prompting on stderr when
// stdin is a terminal; secret fields are not echoed). An optional field
// takes an empty line.
func readValueLines(in io.Reader, slug string, fields []connectors.KeyField, stderr io.Writer) (map[string]string, error) {
	tty := isTerminal(in)
	br := bufio.NewReader(in)
	values := map[string]string{}
	for _, f := range fields {
		if tty {
			label := f.Label
			if label == "" {
				label = f.Name
			}
			fmt.Fprintf(stderr, "%s for %s: ", label, slug)
		}
		var line string
		var err error
		if tty && f.Secret {
			// Read without echo, so the key never shows on screen or in a scrollback.
			raw, rerr := term.ReadPassword(int(in.(*os.File).Fd()))
			fmt.Fprintln(stderr)
			line, err = string(raw), rerr
		} else {
			line, err = br.ReadString('\n')
		}
		line = strings.TrimRight(line, "\r\n")
		if err != nil && (!errors.Is(err, io.EOF) || line == "") {
			if f.Optional && errors.Is(err, io.EOF) {
				continue
			}
			return nil, fmt.Errorf("reading %s from stdin: %v", f.Name, err)
		}
		if line == "" && !f.Optional {
			return nil, fmt.Errorf("%s is empty", f.Name)
		}
		if line != "" {
			values[f.Name] = line
		}
	}
	return values, nil
}

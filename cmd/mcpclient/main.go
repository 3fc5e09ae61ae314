// Command mcpclient is the MCP client the conformance suite drives
// (conformance/run.sh): it reaches the server given as its last argument
// through the platform's own session pool and connector engine, lists and
// calls tools, and logs in with OAuth when the server asks for it. It keeps
// its state in a scratch database, guilds_conformance, on the server of
// DATABASE_URL.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("mcpclient", flag.ContinueOnError)
	cimd := fs.String("client-metadata-url", os.Getenv("MCPCLIENT_CLIENT_METADATA_URL"),
		"URL of this client's metadata document, used as client id by servers that support it")
	timeout := fs.Duration("timeout", 25*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mcpclient [flags] SERVER_URL")
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	c := &client{
		log:               log,
		url:               fs.Arg(0),
		scenario:          os.Getenv("MCP_CONFORMANCE_SCENARIO"),
		clientMetadataURL: *cimd,
	}
	if err := c.parseContext(os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		log.Error("mcpclient: bad MCP_CONFORMANCE_CONTEXT", "err", err)
		return 1
	}
	if err := c.open(ctx, os.Getenv("DATABASE_URL")); err != nil {
		log.Error("mcpclient: setup failed", "err", err)
		return 1
	}
	defer c.close()
	if err := c.drive(ctx); err != nil {
		log.Error("mcpclient: failed", "scenario", c.scenario, "err", err)
		return 1
	}
	log.Info("mcpclient: done", "scenario", c.scenario)
	return 0
}

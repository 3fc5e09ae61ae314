// Package remote is the one path a call of a login's listed tool takes,
// whoever makes it: a run's tool activity and the Tools view's Test call.
// The arguments are prepared against the listed schema, the call goes to
// what serves the login's catalog kind, which the offer already knows (the
// adapter host for a local adapter, the MCP pool for a remote server), and
// the answer goes through the result pipeline (tools.Stamp) with the
// caller's redaction set. See docs/adr/0608.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/tools"
)

// Caller sends one call on a login (internal/mcppool.Pool,
// internal/adapters/host.Host). It resolves the login's credential itself
// and redacts the values it used.
type Caller interface {
	Call(ctx context.Context, connectionID, remoteName string, args json.RawMessage) (string, error)
}

// Callers are what serve each kind of login; a nil one refuses its calls
// with ErrNoCaller.
type Callers struct {
	MCP      Caller // remote MCP servers (*mcppool.Pool)
	Adapters Caller // local adapters (*host.Host)
}

// For is the caller of a catalog kind: the adapter host for an adapter, the
// MCP pool for any other.
func (c Callers) For(kind catalog.Kind) Caller {
	if kind == catalog.KindAdapter {
		return c.Adapters
	}
	return c.MCP
}

// PartsCaller is a Caller that also gives a result's pieces, images kept
// aside from the text (mcppool.Pool). A Caller without it answers text only.
type PartsCaller interface {
	CallParts(ctx context.Context, connectionID, remoteName string, args json.RawMessage) ([]tools.Part, error)
}

// KeepImage keeps the i-th image (from 1) of a call's result and returns
// where it was kept, as the model reads it.
type KeepImage func(ctx context.Context, i int, im tools.Image) (string, error)

// Tool is a tool a login listed.
type Tool struct {
	// Kind is the login's catalog kind, as the offer knows it: it routes the
	// call (Callers.For).
	Kind         catalog.Kind
	ConnectionID string
	RemoteName   string          // the server's own name for it
	Schema       json.RawMessage // the listed input schema; empty: nothing to check
	UIResource   string          // the ui:// page its listing names (MCP Apps), or ""
}

// Options are what differs between callers.
type Options struct {
	// Redactor is the redaction set the result is redacted against: the
	// run's, or the login's for the Test. It is required: a caller that could
	// not load it must not call (nil refuses the call with ErrNoRedactor).
	Redactor *tools.Redactor
	// Remaining is the run's tool calls left after this one (the trailer).
	Remaining int
	// NoTrailer leaves the remaining-calls trailer out: no model reads it.
	NoTrailer bool
	// Log receives a failed call by ids only; nil means slog.Default().
	Log *slog.Logger
	// Keep keeps the result's images (a run's); nil keeps none, and each is
	// only described.
	Keep KeepImage
	// KeepApp keeps the result's MCP Apps pages (a run's); nil reads and
	// keeps none, and each is only named.
	KeepApp KeepApp
}

// ErrNoRedactor refuses a call made without a redaction set.
var ErrNoRedactor = errors.New("the result cannot be redacted, so the tool was not called")

// ErrNoCaller refuses a call where nothing serves the login's kind.
var ErrNoCaller = errors.New("remote tools are not available on this worker")

// SchemaError is a listed schema the validator cannot compile: the call is
// refused, since arguments a run could not check are not sent.
type SchemaError struct{ Err error }

func (e *SchemaError) Error() string { return "the tool's schema does not compile: " + e.Err.Error() }
func (e *SchemaError) Unwrap() error { return e.Err }

// Call makes one call of t and returns its result through the pipeline, as
// stored and shown. It always returns that result: when the call failed or
// was refused the result is the stamped "ERROR: " text and err says why, so
// a caller that answers some failures otherwise (the Test's 422 and 409) can
// tell them apart:
//
//   - ErrNoRedactor, ErrNoCaller, *SchemaError, *tools.ArgumentError: nothing
//     was sent;
//   - any other error is the pool's (the login must be reconnected, the
//     server did not answer, …), already redacted of the values it used.
func Call(ctx context.Context, callers Callers, t Tool, args json.RawMessage, opt Options) (string, error) {
	pool := callers.For(t.Kind)
	log := opt.Log
	if log == nil {
		log = slog.Default()
	}
	stamp := tools.StampOptions{Redactor: opt.Redactor, Remaining: opt.Remaining, NoTrailer: opt.NoTrailer, Log: log}
	failed := func(err error) (string, error) { return tools.Stamp(tools.ErrorResult(err.Error()), stamp), err }
	switch {
	case opt.Redactor == nil:
		return failed(ErrNoRedactor)
	case pool == nil:
		return failed(ErrNoCaller)
	}
	args, err := prepare(t.Schema, args)
	if err != nil {
		return failed(err)
	}
	out, err := callText(ctx, pool, t, args, opt, log)
	if err != nil {
		// The message is redacted in the result; the log names ids only.
		log.WarnContext(ctx, "remote call failed", "connection_id", t.ConnectionID, "remote_tool", t.RemoteName)
		return failed(err)
	}
	return tools.Stamp(out, stamp), nil
}

// prepare readies a call's arguments with tools.Schema.Prepare (the optional
// empty strings dropped, then validation); an empty schema leaves them as
// they are.
func prepare(schema, args json.RawMessage) (json.RawMessage, error) {
	if len(schema) == 0 {
		return args, nil
	}
	s, err := tools.CompileSchema(schema)
	if err != nil {
		return nil, &SchemaError{Err: err}
	}
	return s.Prepare(args)
}

// callText is the call's answer as text, each image described: kept with
// opt.Keep unless it holds a value of the redaction set (pixels cannot be
// redacted) or Keep fails.
func callText(ctx context.Context, pool Caller, t Tool, args json.RawMessage, opt Options, log *slog.Logger) (string, error) {
	pc, ok := pool.(PartsCaller)
	if !ok {
		return pool.Call(ctx, t.ConnectionID, t.RemoteName, args)
	}
	parts, err := pc.CallParts(ctx, t.ConnectionID, t.RemoteName, args)
	if err != nil {
		return "", err
	}
	return partsText(ctx, pool, t, parts, opt, log), nil
}

// partsText is a result's pieces as the model reads them: each image
// withheld when it holds a value of the redaction set, else kept with
// opt.Keep (or only described), each MCP Apps page kept with opt.KeepApp.
func partsText(ctx context.Context, pool Caller, t Tool, parts []tools.Part, opt Options, log *slog.Logger) string {
	for _, p := range parts {
		if p.Image != nil {
			p.Image.Withhold(opt.Redactor, "")
		}
	}
	parts = keepApps(ctx, pool, t, parts, opt, log)
	return tools.JoinParts(parts, func(i int, im tools.Image) string {
		if opt.Keep == nil {
			return ""
		}
		where, err := opt.Keep(ctx, i, im)
		if err != nil {
			log.WarnContext(ctx, "a result image could not be kept", "connection_id", t.ConnectionID, "remote_tool", t.RemoteName, "err", err)
			return ""
		}
		return where
	})
}

package mcppool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/inputs"
)

// declining is the options of a one-off client (a key check's listing):
// nobody is there to answer a form.
var declining = []client.ClientOption{client.WithElicitationHandler(declineElicitation{})}

// callTimeout bounds a tools/call: the row's or the pool's, plus the time a
// person has to answer a form where the server's forms go to one and the
// call can ask.
func callTimeout(ctx context.Context, info ServerInfo, pool time.Duration) time.Duration {
	d := or(info.CallTimeout, pool)
	if info.AskPerson && inputs.AskerFrom(ctx) != nil {
		d += info.InputWait
	}
	return d
}

// answerMargin is kept of a call's deadline for the answer to reach the
// server once the person's wait ends.
const answerMargin = 2 * time.Second

// personElicitation sends a server's form to a person (config.elicitation
// "person"): the call's asker records it in the operator's inbox and the call
// waits for the answer, up to the row's bound and within the call's deadline
// (docs/adr/0515). Where nobody can be asked (no asker: a Test call, a
// listing; a handshake-era server's own request that reached no call, over
// stdio or on the GET stream;
// a form that cannot be shown) the form is declined, as by default.
type personElicitation struct {
	wait time.Duration
	log  interface {
		WarnContext(ctx context.Context, msg string, args ...any)
	}
}

func (p personElicitation) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	asker := inputs.AskerFrom(ctx)
	if asker == nil {
		return declineElicitation{}.Elicit(ctx, req)
	}
	f := inputs.Form{Mode: req.Params.Mode, Message: req.Params.Message, URL: req.Params.URL}
	if f.Mode == "" {
		f.Mode = inputs.ModeForm
	}
	if f.Mode == inputs.ModeForm {
		f.Schema, _ = json.Marshal(req.Params.RequestedSchema)
	}
	if err := inputs.CheckForm(f); err != nil {
		p.log.WarnContext(ctx, "mcppool: a server's form was declined", "err", err)
		return declineElicitation{}.Elicit(ctx, req)
	}
	wait := p.wait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)-answerMargin)
	}
	if wait <= 0 {
		return declineElicitation{}.Elicit(ctx, req)
	}
	a, err := asker.Ask(ctx, f, wait)
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseAction(a.Action), Content: a.Content}}, nil
}

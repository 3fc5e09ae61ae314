// Package secrets holds the two secret tools: secret_store (the agent saves
// a value it produced as a secret granted to itself) and secret_request (in
// a direct run, the agent asks an operator for one and waits, bounded, for
// the answer). Neither ever puts a value in its result. The arguments of
// secret_store reach the handler from the sealed vault (activities/run
// ArgumentVault), never through the workflow.
package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/validation"
)

// Tool names.
const (
	ToolStore   = agentsecrets.StoreTool
	ToolRequest = "secret_request"
)

// DefaultWait bounds how long secret_request waits for an operator; it stays
// under the activity timeout of the tool's class (tools.ClassScript, 120 s).
const DefaultWait = 90 * time.Second

// DefaultDurableWait bounds how long a run waits for an answer, suspended
// (docs/adr/0514, 0518): nothing is held while it waits. An operator's
// waiting time for approvals of secret_request replaces it.
const DefaultDurableWait = approvals.DefaultWait

// Deps are what the secret tools need.
type Deps struct {
	DB      store.DB
	Keyring *secret.Keyring // nil: secret_store fails with agentsecrets.ErrNoKeyring
	Log     *slog.Logger
	// Wait bounds secret_request's wait inside its call where the run cannot
	// wait for it (DefaultWait when zero); Poll is how often it re-reads the
	// request then (1 s when zero). DurableWait bounds the run's own wait
	// (DefaultDurableWait when zero): the call is suspended meanwhile.
	Wait, Poll, DurableWait time.Duration
}

var storeSchema = json.RawMessage(`{"type":"object","properties":{
	"name":{"type":"string","description":"the secret's name, an environment variable name in capitals: ^[A-Z][A-Z0-9_]{0,63}$"},
	"value":{"type":"string","description":"the value to keep (8 to 4096 bytes)"}},
	"required":["name","value"],"additionalProperties":false}`)

var requestSchema = json.RawMessage(`{"type":"object","properties":{
	"name":{"type":"string","description":"the secret's name, an environment variable name in capitals: ^[A-Z][A-Z0-9_]{0,63}$"},
	"reason":{"type":"string","minLength":1,"maxLength":1000,"description":"one or two sentences the operator reads: what you need it for"}},
	"required":["name","reason"],"additionalProperties":false}`)

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "secrets", Group: "Secrets", Gate: tools.GateBinding}

// requestListing: secret_request waits for an operator in a direct chat, so
// only direct runs offer it.
var requestListing = tools.Listing{Family: "secrets", Group: "Secrets", Gate: tools.GateBinding,
	Triggers: []tools.Trigger{tools.TriggerDirect}}

// Register adds secret_store and secret_request to reg.
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Wait <= 0 {
		d.Wait = DefaultWait
	}
	if d.Poll <= 0 {
		d.Poll = time.Second
	}
	if d.DurableWait <= 0 {
		d.DurableWait = DefaultDurableWait
	}
	fam.Register(tools.Tool{Name: ToolStore, Class: tools.ClassDefault, Idempotent: true, Schema: storeSchema,
		Description: "Keep a value you produced (an API key you just created, a generated password) as a secret granted to you. " +
			"Your later shell commands see it as the environment variable $NAME; its value is redacted from every result and never shown again.",
		Handler: d.store})
	fam.Register(tools.Tool{Name: ToolRequest, Class: tools.ClassScript, Idempotent: true, Schema: requestSchema,
		Description: "Ask the operator for a secret you need (an API key, a password), by name and with a reason. " +
			"Your run waits for the answer (a day unless an operator set another wait): provided (then your shell commands see it as $NAME) or declined.",
		Handler: d.request, Listing: requestListing})
}

func (d Deps) store(ctx context.Context, call tools.Call) (string, error) {
	var in struct{ Name, Value string }
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", errors.New("arguments: expected an object with name and value")
	}
	if call.AgentID == "" {
		return "", errors.New("secret_store runs for an agent during a run")
	}
	if in.Value == tools.RedactionMarker {
		return "", errors.New("value: this worker could not keep the call's arguments sealed (it has no encryption key), so nothing was stored")
	}
	owner, err := agentsecrets.LoadPlace(ctx, d.DB, agentsecrets.ScopeAgent, call.AgentID)
	if err != nil {
		return "", fmt.Errorf("load the agent: %w", err)
	}
	_, created, err := agentsecrets.SetOwn(ctx, d.DB, d.Keyring, owner, in.Name, in.Value, actor(call))
	if err != nil {
		return "", err
	}
	verb := "replaced"
	if created {
		verb = "stored"
	}
	return fmt.Sprintf("%s secret %s, granted to you: your shell commands see it as $%s. Its value is redacted from every result; do not repeat it.",
		verb, in.Name, in.Name), nil
}

func (d Deps) request(ctx context.Context, call tools.Call) (string, error) {
	var in struct{ Name, Reason string }
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return "", errors.New("arguments: expected an object with name and reason")
	}
	if call.Trigger != "direct" {
		return "", &validation.Error{Problems: []validation.Problem{{Field: "trigger",
			Message: fmt.Sprintf("secret_request is for direct runs only, where an operator is there to answer; this is a %s run", orNone(call.Trigger))}}}
	}
	if call.RunID == "" || call.Seq == 0 {
		return "", errors.New("secret_request runs during a run")
	}
	// A new request for a name an operator set could only end in a refused
	// answer; a resumed call keeps the request it opened.
	if _, err := agentsecrets.RequestAt(ctx, d.DB, call.RunID, call.Seq); errors.Is(err, store.ErrNotFound) {
		place, err := agentsecrets.LoadPlace(ctx, d.DB, agentsecrets.ScopeAgent, call.AgentID)
		if err != nil {
			return "", fmt.Errorf("load the agent: %w", err)
		}
		if err := agentsecrets.CheckNotOperatorSet(ctx, d.DB, place, in.Name); err != nil {
			return "", fmt.Errorf("%w; if your shell commands do not see $%s, ask an operator to grant it to you", err, in.Name)
		}
	} else if err != nil {
		return "", err
	}
	wait, err := d.durableWait(ctx, call)
	if err != nil {
		return "", err
	}
	r, err := agentsecrets.OpenRequest(ctx, d.DB, agentsecrets.NewRequest{RunID: call.RunID, AgentID: call.AgentID,
		OrgID: call.OrgID, Seq: call.Seq, Name: in.Name, Reason: in.Reason, Wait: wait})
	if err != nil {
		return "", err
	}
	// Where the run can wait durably the call is suspended until the
	// operator answers (the answer signals the run) or the wait is over; it
	// is then called again and reads the answer. The bound was fixed when
	// the request opened, so a resumed call does not wait afresh, and an
	// operator's later change of the setting does not move it. Elsewhere (no
	// run to wait in) the call polls for a short while.
	until := r.CreatedAt.Add(wait)
	if r.WaitUntil != nil {
		until = *r.WaitUntil
	}
	waited := until.Sub(r.CreatedAt)
	waiting := r.Status == agentsecrets.RequestPending && !tools.WaitOver(ctx) && time.Now().Before(until)
	if waiting && tools.Suspend(ctx, tools.Suspension{Key: r.ID, Until: until}) {
		return "", nil
	}
	if waiting {
		waited = d.Wait
		deadline := r.CreatedAt.Add(d.Wait)
		for r.Status == agentsecrets.RequestPending && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(d.Poll):
			}
			if r, err = agentsecrets.RequestAt(ctx, d.DB, call.RunID, call.Seq); err != nil {
				return "", err
			}
		}
	}
	switch r.Status {
	case agentsecrets.RequestProvided:
		return fmt.Sprintf("the operator provided %s (request %s): your shell commands see it as $%s; its value is redacted from every result.",
			r.Name, r.ID, r.Name), nil
	case agentsecrets.RequestDeclined:
		return fmt.Sprintf("the operator declined to provide %s (request %s). Carry on without it, or explain what you cannot do without it.",
			r.Name, r.ID), nil
	}
	return fmt.Sprintf("no answer yet to your request for %s (request %s): this call waits %s at most, and that time has passed. "+
		"The request stays in the operator's inbox; do not ask again in this run. Carry on with what you can do without it and say "+
		"in your answer that you need %s. If the operator provides it later it is stored as your secret %s, which your next runs see as $%s.",
		r.Name, r.ID, waited.Round(time.Second), r.Name, r.Name, r.Name), nil
}

// durableWait is how long a run waits for an answer: the waiting time the
// operators set for approvals of secret_request at the agent's scopes (the
// narrowest setting decides, ask or not), DurableWait when none says.
func (d Deps) durableWait(ctx context.Context, call tools.Call) (time.Duration, error) {
	set, err := approvals.Resolve(ctx, d.DB, approvals.Place{OrganisationID: call.OrgID, GuildID: call.GuildID, AgentID: call.AgentID}, ToolRequest)
	if err != nil {
		return 0, fmt.Errorf("read the waiting time: %w", err)
	}
	if set.Decided && set.Wait > 0 {
		return min(set.Wait, approvals.MaxWait), nil
	}
	return d.DurableWait, nil
}

func actor(call tools.Call) string {
	if call.RunID != "" {
		return "agent:" + call.AgentID + " run:" + call.RunID
	}
	return "agent:" + call.AgentID
}

func orNone(s string) string {
	if s == "" {
		return "non-direct"
	}
	return s
}

package run

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/memory"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/tools"
)

// Model runs one model turn: it rebuilds the conversation from Postgres,
// calls the provider with the snapshot's tools and stores the answer at
// in.Seq. A retry after the answer was stored returns it without calling
// the provider again.
//
// It heartbeats for as long as it runs (the provider can take minutes), so
// a worker lost mid-turn is noticed at the model's heartbeat timeout and the
// turn retried elsewhere. Two attempts can then overlap (a worker stalled
// rather than dead): the answer stored first at (run, seq) is the turn's,
// and the later attempt returns it without sealing or storing its own.
func (a *Activities) Model(ctx context.Context, in ModelInput) (ModelOutput, error) {
	stop := a.heartbeat(ctx)
	defer stop()
	if out, ok, err := a.storedTurn(ctx, in); err != nil || ok {
		return out, err
	}
	r, err := runs.Load(ctx, a.d.DB, in.RunID)
	if err != nil {
		return ModelOutput{}, err
	}
	if why, err := a.modelBudget(ctx, r); err != nil || why != "" {
		return ModelOutput{Stopped: why}, err // nothing stored: the workflow closes the run
	}
	agent, err := orgs.LoadAgent(ctx, a.d.DB, r.AgentID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return ModelOutput{}, nonRetryable(ErrTypeRunGone, errors.New("the agent was deleted"))
		}
		return ModelOutput{}, err
	}
	snap, err := a.snapshot(ctx, a.d.DB, r.ID)
	if err != nil {
		return ModelOutput{}, fmt.Errorf("load snapshot: %w", err)
	}
	history, err := runs.Messages(ctx, a.d.DB, r.ID, 0)
	if err != nil {
		return ModelOutput{}, err
	}
	if err := a.prepareRepositories(ctx, agent, snap, history); err != nil {
		return ModelOutput{}, err
	}
	if a.d.Models == nil {
		return ModelOutput{}, nonRetryable(ErrTypeNoModelKey, errors.New("this worker has no model client"))
	}
	model := r.Model
	if model == "" {
		model = agent.Model
	}
	target, err := a.d.Models.Resolve(ctx, a.d.DB, r.OrganisationID, model)
	if err != nil {
		return ModelOutput{}, modelError(err)
	}
	var tools []models.Tool
	memoryOffered := false
	if !in.Final {
		off := a.nowOff(ctx, r, snap) // native tools turned off since the run started
		for _, t := range snap.Tools {
			if off[t.Name] {
				continue
			}
			tools = append(tools, models.Tool{Type: "function", Function: models.FunctionSpec{
				Name: t.Name, Description: t.Description, Parameters: t.ShapedSchema}})
			memoryOffered = memoryOffered || t.Name == memory.ToolWrite
		}
	}
	// The memory is read at every turn, so a memory_write earlier in the run
	// shows; memory_write is named only when this turn offers it.
	mem, err := memory.Load(ctx, a.d.DB, agent.ID)
	if err != nil {
		return ModelOutput{}, fmt.Errorf("load memory: %w", err)
	}
	images, err := runs.Images(ctx, a.d.DB, r.ID)
	if err != nil {
		return ModelOutput{}, fmt.Errorf("load the run's images: %w", err)
	}
	req := models.Request{Messages: conversation(systemPrompt(agent.Prompt, memory.PromptSection(mem, memoryOffered), snap.StatePrices), history, images),
		Tools: tools}
	resp, err := a.complete(ctx, r.ID, target, req)
	if err != nil {
		a.d.Log.WarnContext(ctx, "model call failed", "run_id", r.ID, "target", target, "err", err)
		return ModelOutput{}, modelError(err)
	}
	// Another attempt of this turn may have stored its answer while this one
	// waited on the provider: that answer stands, and its sealed arguments
	// are not to be overwritten by this attempt's.
	if out, ok, err := a.storedTurn(ctx, in); err != nil || ok {
		return out, err
	}
	msg := runs.Message{RunID: r.ID, Seq: in.Seq, Role: runs.RoleAssistant, Content: resp.Content}
	if !in.Final {
		for i, c := range resp.ToolCalls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", in.Seq, i)
			}
			msg.ToolCalls = append(msg.ToolCalls, runs.ToolCallRequest{ID: id, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
	}
	if err := a.hideArguments(ctx, &msg); err != nil {
		return ModelOutput{}, err
	}
	if err := a.redactAnswer(ctx, r.AgentID, &msg); err != nil {
		return ModelOutput{}, err
	}
	stored, err := a.storeTurn(ctx, r, target, msg, resp.Usage)
	if err != nil {
		return ModelOutput{}, err
	}
	if err := a.recordExploration(ctx, snap); err != nil {
		return ModelOutput{}, err
	}
	return modelOutput(stored), nil
}

// complete sends req; a request with images the provider refuses is sent
// again without them (the model then reads only their descriptions), since
// providers do not say which models take images.
func (a *Activities) complete(ctx context.Context, runID string, target models.Target, req models.Request) (models.Response, error) {
	mctx, turn := telemetry.StartModelTurn(ctx, runID, target.Provider, target.Model)
	resp, err := a.d.Models.Complete(mctx, target, req)
	turn.End(resp.Usage.PromptTokens, resp.Usage.CompletionTokens, resp.FinishReason, modelErrorType(err))
	if err == nil || !req.HasImages() || !models.RefusesImages(err) {
		return resp, err
	}
	a.d.Log.InfoContext(ctx, "the model refused a request with images; sending their descriptions only", "run_id", runID, "target", target)
	return a.complete(ctx, runID, target, req.WithoutImages())
}

// storedTurn returns the answer already stored at in.Seq, if any (a retry,
// or an attempt that overlapped this one).
func (a *Activities) storedTurn(ctx context.Context, in ModelInput) (ModelOutput, bool, error) {
	m, err := runs.GetMessage(ctx, a.d.DB, in.RunID, in.Seq)
	if errors.Is(err, store.ErrNotFound) {
		return ModelOutput{}, false, nil
	}
	if err != nil {
		return ModelOutput{}, false, err
	}
	if snap, err := a.snapshot(ctx, a.d.DB, in.RunID); err == nil {
		if err := a.recordExploration(ctx, snap); err != nil {
			return ModelOutput{}, false, err
		}
	}
	return modelOutput(m), true, nil
}

// hideArguments hands the arguments of every call to a sealed tool
// (secret_store) to the vault, keyed by the seq its result will take, and
// keeps only their shown form in the message: the transcript, the next
// turns' prompts and the workflow history never hold them. The hidden values
// are also redacted from the message's text and its other calls.
func (a *Activities) hideArguments(ctx context.Context, msg *runs.Message) error {
	if a.d.Vault == nil {
		return nil
	}
	var hidden []string
	sealed := map[int]bool{}
	for i, c := range msg.ToolCalls {
		if !a.d.Vault.Sealed(c.Name) {
			continue
		}
		shown, h, err := a.d.Vault.Hide(ctx, msg.RunID, msg.Seq+1+i, c.ID, c.Arguments)
		if err != nil {
			return fmt.Errorf("seal the arguments of %s: %w", c.Name, err)
		}
		msg.ToolCalls[i].Arguments = shown
		sealed[i] = true
		hidden = append(hidden, h...)
	}
	if len(hidden) == 0 {
		return nil
	}
	red := tools.NewRedactor(hidden, a.d.Log)
	msg.Content = red.Redact(msg.Content)
	for i := range msg.ToolCalls {
		if !sealed[i] {
			msg.ToolCalls[i].Arguments = red.Redact(msg.ToolCalls[i].Arguments)
		}
	}
	return nil
}

// redactAnswer redacts the model's text and every call's arguments with the
// run's redaction set (the agent's granted secrets, its logins' credentials,
// the model keys) before the answer is stored or returned. A value the agent
// kept with secret_store in an earlier turn and now writes into a call is
// then in neither the transcript, the workflow history (this activity's
// result, the tool activities' inputs) nor what the tool stores (a note, a
// record, the memory, an issue, a schedule, a script): each receives the
// redacted form, as group_post's text does. Shell commands reach a secret
// as $NAME, which is not redacted.
func (a *Activities) redactAnswer(ctx context.Context, agentID string, msg *runs.Message) error {
	red, err := a.redactor(ctx, agentID)
	if err != nil || red == nil {
		return err
	}
	msg.Content = red.Redact(msg.Content)
	for i := range msg.ToolCalls {
		msg.ToolCalls[i].Arguments = red.Redact(msg.ToolCalls[i].Arguments)
	}
	return nil
}

// recordExploration rewrites a coding run's metadata.exploration once a
// generation has ended; every tool call of the run so far has its result
// stored by then.
func (a *Activities) recordExploration(ctx context.Context, snap runs.Snapshot) error {
	if !snap.Flags.Coding {
		return nil
	}
	if _, err := runs.RecordExploration(ctx, a.d.DB, snap.RunID); err != nil {
		return fmt.Errorf("record exploration: %w", err)
	}
	return nil
}

// modelErrorType is a failed model call's error.type: the provider's HTTP
// status when it answered, never the message.
func modelErrorType(err error) string {
	if err == nil {
		return ""
	}
	var me *models.Error
	if errors.As(err, &me) && me.Status != 0 {
		return fmt.Sprintf("http_%d", me.Status)
	}
	return "_OTHER"
}

func modelOutput(m runs.Message) ModelOutput {
	return ModelOutput{Seq: m.Seq, Text: m.Content, Calls: m.ToolCalls}
}

// systemPrompt joins the agent's prompt and its sections (memory, then the
// prices quoted at run start), leaving out the empty ones.
func systemPrompt(prompt string, sections ...string) string {
	parts := make([]string, 0, len(sections)+1)
	for _, s := range append([]string{prompt}, sections...) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

// conversation turns the stored transcript into the provider's messages.
// The images of a turn's tool results follow that turn's last tool message,
// in one user message (providers take images in user content only).
func conversation(prompt string, history []runs.Message, images map[int][]runs.Image) []models.Message {
	out := make([]models.Message, 0, len(history)+1)
	if prompt != "" {
		out = append(out, models.Message{Role: "system", Content: prompt})
	}
	var pending []models.Part
	for i, m := range history {
		wm := models.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			wm.ToolCalls = append(wm.ToolCalls, models.ToolCall{ID: c.ID, Type: "function",
				Function: models.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		out = append(out, wm)
		if m.Role == runs.RoleTool {
			pending = append(pending, imageParts(m, images[m.Seq])...)
		}
		if len(pending) > 0 && (i == len(history)-1 || history[i+1].Role != runs.RoleTool) {
			out = append(out, models.Message{Role: runs.RoleUser, Parts: pending})
			pending = nil
		}
	}
	return out
}

// imageParts are the parts giving the model the images of one tool result,
// each after a line naming it as the result's text does.
func imageParts(m runs.Message, images []runs.Image) []models.Part {
	var out []models.Part
	for _, im := range images {
		out = append(out,
			models.Part{Type: "text", Text: fmt.Sprintf("%s, returned by tool call %s:", runs.ImageRef(im.Seq, im.Idx), m.ToolCallID)},
			models.Part{Type: "image_url", ImageURL: &models.ImageURL{URL: "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)}})
	}
	return out
}

package mcppool

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/inputs"
)

// The durable wait for input_required (docs/adr/0515). mcp-go answers an
// input_required result inside Client.CallTool, with the call's context, and
// sends the call again itself; a person who answers in a day would hold the
// activity that long. So the session's transport looks at each tools/call of
// a row whose forms go to a person, when the call's asker can hold it
// (inputs.Holder):
//   - an input_required result made only of forms is held: its requests go
//     to the inbox, its requestState to PostgreSQL (sealed), and the call
//     ends with inputs.ErrSuspended, which the pool turns into "suspended";
//   - the first tools/call of the run's next attempt of that call carries
//     the stored inputResponses and requestState, as mcp-go's loop would.
// A handshake-era elicitation/create is a request of the server's own on a
// call it holds open, so it cannot be held this way: it waits in place.

// sendHeld sends req with send, holding or resuming it as above.
func sendHeld(ctx context.Context, person bool, req transport.JSONRPCRequest,
	send func(context.Context, transport.JSONRPCRequest) (*transport.JSONRPCResponse, error)) (*transport.JSONRPCResponse, error) {
	if !person || req.Method != string(mcp.MethodToolsCall) {
		return send(ctx, req)
	}
	h, ok := inputs.AskerFrom(ctx).(inputs.Holder)
	if !ok {
		return send(ctx, req)
	}
	if params, ok := paramsOf(req.Params); ok {
		if _, answering := params["inputResponses"]; !answering {
			answers, state, found, err := h.Resume(ctx)
			if err != nil {
				return nil, err
			}
			if found {
				params["inputResponses"], _ = json.Marshal(responsesOf(answers))
				if state != "" {
					params["requestState"], _ = json.Marshal(state)
				}
				req.Params = params
			}
		}
	}
	res, err := send(ctx, req)
	if err != nil || res == nil || res.Error != nil {
		return res, err
	}
	forms, state, asks := formsAsked(res.Result)
	if !asks {
		_ = h.Delivered(context.WithoutCancel(ctx)) // content left behind is cleared when the run ends
		return res, nil
	}
	ok, err = h.Hold(ctx, forms, state)
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, inputs.ErrSuspended
	}
	return res, nil
}

// paramsOf is a request's params as an object of raw members.
func paramsOf(p any) (map[string]json.RawMessage, bool) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

func responsesOf(answers map[string]inputs.Answer) map[string]mcp.ElicitationResult {
	out := make(map[string]mcp.ElicitationResult, len(answers))
	for k, a := range answers {
		out[k] = mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
			Action: mcp.ElicitationResponseAction(a.Action), Content: a.Content}}
	}
	return out
}

// formsAsked reads an input_required result made only of forms (or links),
// with each form's schema as the server wrote it. Any other result, and one
// that also asks for sampling or roots, is left to mcp-go.
func formsAsked(result json.RawMessage) (map[string]inputs.Form, string, bool) {
	var r struct {
		ResultType    mcp.ResultType `json:"resultType"`
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				Mode            string          `json:"mode"`
				Message         string          `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
				URL             string          `json:"url"`
			} `json:"params"`
		} `json:"inputRequests"`
		RequestState string `json:"requestState"`
	}
	if json.Unmarshal(result, &r) != nil || r.ResultType != mcp.ResultTypeInputRequired || len(r.InputRequests) == 0 {
		return nil, "", false
	}
	forms := make(map[string]inputs.Form, len(r.InputRequests))
	for k, ir := range r.InputRequests {
		if ir.Method != string(mcp.MethodElicitationCreate) {
			return nil, "", false
		}
		f := inputs.Form{Mode: ir.Params.Mode, Message: ir.Params.Message, URL: ir.Params.URL}
		if f.Mode == "" {
			f.Mode = inputs.ModeForm
		}
		if f.Mode == inputs.ModeForm {
			f.Schema = ir.Params.RequestedSchema
		}
		forms[k] = f
	}
	return forms, r.RequestState, true
}

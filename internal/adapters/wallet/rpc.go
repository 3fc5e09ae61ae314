package wallet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"sync/atomic"

	"github.com/guilds/guilds/internal/adapters"
)

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("the node answered error %d: %s", e.Code, e.Message)
}

// rpcClient sends JSON-RPC 2.0 requests to one chain's node. When the
// primary node refuses the key (HTTP 401 or 403) and the chain has a
// public RPC, that one answers this and every later request of the call: a
// refused request was never run, so nothing is sent twice.
type rpcClient struct {
	conn     adapters.Conn
	primary  string
	fallback string
	onPublic atomic.Bool
	id       atomic.Int64
}

func newRPC(c adapters.Conn, primary, fallback string) *rpcClient {
	return &rpcClient{conn: c, primary: primary, fallback: fallback}
}

// usedPublic reports whether the public RPC answered.
func (r *rpcClient) usedPublic() bool { return r.onPublic.Load() }

func (r *rpcClient) call(ctx context.Context, method string, out any, params ...any) error {
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id.Add(1), "method": method, "params": params})
	if err != nil {
		return err
	}
	url := r.primary
	if r.onPublic.Load() {
		url = r.fallback
	}
	err = r.post(ctx, url, body, out)
	var he *adapters.HTTPError
	if errors.As(err, &he) && he.Refused() && r.fallback != "" && !r.onPublic.Load() {
		r.onPublic.Store(true)
		return r.post(ctx, r.fallback, body, out)
	}
	return err
}

func (r *rpcClient) post(ctx context.Context, url string, body []byte, out any) error {
	var ans struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if err := r.conn.DoJSON(ctx, http.MethodPost, url, "", nil, h, bytes.NewReader(body), &ans); err != nil {
		return withoutURL(err)
	}
	if ans.Error != nil {
		return ans.Error
	}
	if out == nil {
		return nil
	}
	if len(ans.Result) == 0 {
		return errors.New("the node's answer has no result")
	}
	return json.Unmarshal(ans.Result, out)
}

// withoutURL drops the request URL (which holds the Alchemy key in its
// path) from a transport error.
func withoutURL(err error) error {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("the service could not be reached: %w", ue.Err)
	}
	return err
}

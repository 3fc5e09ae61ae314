package browserops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// maxMessage bounds one CDP message: a full accessibility tree or a
// screenshot of a large page runs to megabytes.
const maxMessage = 64 << 20

// cdpError is an error answer of a CDP method.
type cdpError struct {
	Method  string
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *cdpError) Error() string { return fmt.Sprintf("%s: %s", e.Method, e.Message) }

// conn is one DevTools websocket session with a page target. Calls are
// synchronous; events go to whoever subscribed to their method.
type conn struct {
	ws     *websocket.Conn
	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan message
	subs    map[string][]chan json.RawMessage
	err     error // set when the reader stops
	done    chan struct{}
}

type message struct {
	ID     int64           `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *cdpError       `json:"error,omitempty"`
}

// dial opens a session on a target's websocket URL.
func dial(ctx context.Context, wsURL string) (*conn, error) {
	ws, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("attach to the page over CDP: %w", err)
	}
	ws.SetReadLimit(maxMessage)
	c := &conn{ws: ws, pending: map[int64]chan message{}, subs: map[string][]chan json.RawMessage{}, done: make(chan struct{})}
	go c.read() //nolint:gosec // G118: the reader lives as long as the connection, not as one call
	return c, nil
}

func (c *conn) close() { _ = c.ws.Close(websocket.StatusNormalClosure, "") }

func (c *conn) read() {
	defer close(c.done)
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			c.mu.Lock()
			c.err = err
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		var m message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		c.mu.Lock()
		if m.ID != 0 {
			if ch := c.pending[m.ID]; ch != nil {
				ch <- m
				delete(c.pending, m.ID)
			}
		} else if m.Method != "" {
			for _, ch := range c.subs[m.Method] {
				select {
				case ch <- m.Params:
				default: // a subscriber that does not keep up loses events
				}
			}
		}
		c.mu.Unlock()
	}
}

// subscribe returns a channel of the params of every later event named
// method.
func (c *conn) subscribe(method string) <-chan json.RawMessage {
	ch := make(chan json.RawMessage, 64)
	c.mu.Lock()
	c.subs[method] = append(c.subs[method], ch)
	c.mu.Unlock()
	return ch
}

// call runs one CDP method; result may be nil.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	id := c.nextID.Add(1)
	raw, err := json.Marshal(struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{id, method, params})
	if err != nil {
		return err
	}
	ch := make(chan message, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return fmt.Errorf("the browser connection closed: %w", c.err)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.ws.Write(ctx, websocket.MessageText, raw); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: the browser connection closed", method)
		}
		if m.Error != nil {
			m.Error.Method = method
			return m.Error
		}
		if result != nil && len(m.Result) > 0 {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: decode: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// isCDPError reports whether err is a method's error answer.
func isCDPError(err error) bool {
	var e *cdpError
	return errors.As(err, &e)
}

// params is a shorthand for a method's parameters.
type params = map[string]any

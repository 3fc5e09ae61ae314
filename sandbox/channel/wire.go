// Package channel is the command channel between the worker and a sandbox's
// keeper (ADR 0711): one Unix-socket connection per command, a handshake in
// which each side proves it holds the sandbox's token without sending it,
// then length-prefixed frames. Every byte a command prints travels inside a
// frame whose length the server wrote, so no output can pose as framing.
package channel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame kinds. Client to server: Request once, then Stdin chunks (an empty
// one is end of input). Server to client: Stdout and Stderr chunks, then
// one Exit.
const (
	kindRequest byte = 'R'
	kindStdin   byte = 'I'
	kindStdout  byte = 'O'
	kindStderr  byte = 'E'
	kindExit    byte = 'X'
)

// maxFrame bounds one frame's payload; writers split larger data.
const maxFrame = 64 << 10

// ErrFraming: the peer sent something that is not a frame of this protocol.
var ErrFraming = errors.New("channel: malformed frame")

func writeFrame(w io.Writer, kind byte, p []byte) error {
	for {
		n := min(len(p), maxFrame)
		var head [5]byte
		head[0] = kind
		binary.BigEndian.PutUint32(head[1:], uint32(n))
		if _, err := w.Write(append(head[:], p[:n]...)); err != nil {
			return err
		}
		p = p[n:]
		if len(p) == 0 {
			return nil
		}
	}
}

// readFrame reads one frame into buf (reused when large enough).
func readFrame(r io.Reader, buf []byte) (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("%w: %d bytes (at most %d)", ErrFraming, n, maxFrame)
	}
	switch head[0] {
	case kindRequest, kindStdin, kindStdout, kindStderr, kindExit:
	default:
		return 0, nil, fmt.Errorf("%w: kind %q", ErrFraming, head[0])
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, fmt.Errorf("%w: %v", ErrFraming, err)
	}
	return head[0], buf, nil
}

// refused is the Exit.Error of a connection whose proof failed.
const refused = "refused"

// Request is one command, as the client sends it.
type Request struct {
	// Op is "exec" (the default) or "park": end every process the
	// server's user can signal and empty the folders in Clear.
	Op        string            `json:"op,omitempty"`
	Cmd       []string          `json:"cmd,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Dir       string            `json:"dir,omitempty"`
	TimeoutMS int64             `json:"timeout_ms,omitempty"`
	MaxOutput int               `json:"max_output,omitempty"`
	Stdin     bool              `json:"stdin,omitempty"`
	Clear     []string          `json:"clear,omitempty"`
}

// Exit ends a command's answer.
type Exit struct {
	Code      int    `json:"code"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Error     string `json:"error,omitempty"`
	// Others, after a park: processes still alive besides the server
	// (another user's, which it may not signal).
	Others int `json:"others,omitempty"`
}

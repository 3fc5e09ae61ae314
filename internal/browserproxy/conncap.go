package browserproxy

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// DefaultMaxConnsPerAgent is Options.MaxConnsPerAgent when zero.
const DefaultMaxConnsPerAgent = 64

// capSetting is the variable an operator raises when an agent hits the cap.
const capSetting = "GUILDS_MAX_PROXY_CONNS_PER_AGENT"

// capListener lets one agent hold at most cap(slots) connections to its
// socket at once (each one a request or a tunnel to the outside). One more
// is answered with a 503 that names the setting and closed, so a browser or
// git that opens connections without end cannot exhaust the worker's file
// descriptors or the destination's patience for everyone else.
type capListener struct {
	net.Listener
	slots chan struct{}
}

func limitConns(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		n = DefaultMaxConnsPerAgent
	}
	return &capListener{Listener: ln, slots: make(chan struct{}, n)}
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &slotConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			go refuseOverCap(c, cap(l.slots))
		}
	}
}

// slotConn gives its place back once, when closed: before the close, so a
// peer that has seen the connection end can count on its place being free.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

func refuseOverCap(c net.Conn, n int) {
	defer func() { _ = c.Close() }()
	msg := fmt.Sprintf("this agent already has %d connections open through the proxy (%s)\n", n, capSetting)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(msg), msg)
}

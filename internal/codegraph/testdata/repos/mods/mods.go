// Package mods is the module's root package.
package mods

// Conn is an open connection.
type Conn struct{ addr string }

// Connect opens a connection.
func Connect(addr string) *Conn { return &Conn{addr: addr} }

// Close closes the connection.
func (c *Conn) Close() error { return nil }

// Closer closes anything and mentions Close, Close and Close.
func Closer(c *Conn) error { return c.Close() }

// Rows are a query's results.
type Rows struct{}

// Query runs a query.
func (c *Conn) Query() *Rows { return &Rows{} }

// Next advances to the next row.
func (r *Rows) Next() bool { return false }

// String names the connection.
func (c *Conn) String() string { return c.addr }

// Flush writes what is buffered.
func (c *Conn) Flush() {}

// Default is the connection callers share.
var (
	Default *Conn = Connect("default")
)

// Holder holds a connection.
type Holder struct{ c *Conn }

// Rows reads through the held connection: q's type is Conn.Query's result.
func (h *Holder) Rows() bool {
	q := h.c.Query()
	return q.Next()
}

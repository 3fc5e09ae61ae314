package near

// Close is a function named like Conn.Close, nearer to near/.
func Close() {}

// Pool holds connections.
type Pool struct{}

// Close closes the pool.
func (p *Pool) Close() {}

// Next is another type's Next.
func (p *Pool) Next() bool { return true }

// Flush flushes the pool.
func (p *Pool) Flush() {}

package near

// Close is a function named like Conn.Close, nearer to near/.
func Close() {}

// Pool holds connections.
type Pool struct{}

// Close closes the pool.
func (p *Pool) Close() {}

// Package mods is the module's root package.
package mods

// Conn is an open connection.
type Conn struct{ addr string }

// Connect opens a connection.
func Connect(addr string) *Conn { return &Conn{addr: addr} }

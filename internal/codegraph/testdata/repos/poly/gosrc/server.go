package main

import "example.com/poly/store"

// Logger prints.
type Logger interface {
	Printf(format string, args ...any)
}

// Server answers lookups.
type Server struct {
	st  *store.Store
	log Logger
}

// Handle looks key up through the server's store.
func (srv *Server) Handle(key string) string {
	v, _ := srv.st.Get(key)
	srv.log.Printf("%s", v)
	return v
}

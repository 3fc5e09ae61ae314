package mods

// flushDefault flushes the shared connection through a copy of it.
func flushDefault() {
	c := Default
	c.Flush()
}

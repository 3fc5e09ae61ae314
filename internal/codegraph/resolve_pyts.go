package codegraph

// Python and TypeScript rules the measure against pyright and tsserver
// asked for (issue 37, docs/adr/0710).

// structural reports whether a family's calls through an interface are
// counted as calls of every type that has its methods by name (Go's
// implicit satisfaction). Python has no interfaces the graph sees, and a
// TypeScript caller holding an interface calls the interface's member:
// tsserver does not count a same-shaped class's method as called there.
func structural(fam string) bool { return fam != "js" && fam != "python" }

// attributeRead reports x.name, read and not called, with x of unknown
// type in Python or TypeScript: an attribute or property far more often
// than a method value, so not a caller of the methods of that name.
func attributeRead(lang string, r Ref, qual string) bool {
	switch lang {
	case "python", "typescript", "tsx", "javascript":
		return r.Flags&refCall == 0 && qual != "self" && qual != "this" && qual != "cls"
	}
	return false
}

package main

import (
	"fmt"

	"example.com/poly/store"
)

func main() {
	s := store.New()
	s.Put("a", "b")
	fmt.Println(lookup(s, "a"))
}

func lookup(g store.Getter, key string) string {
	v, err := g.Get(key)
	if err != nil {
		return ""
	}
	return v
}

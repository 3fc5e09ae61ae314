package main

import (
	"encoding/json"
	"testing"
)

func TestArgsForFillsRequiredProperties(t *testing.T) {
	got := argsFor(json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"integer"},
"s":{"type":"string"},"f":{"type":"boolean"},"opt":{"type":"string"}},"required":["a","b","s","f"]}`))
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	if m["a"] != 2.0 || m["b"] != 3.0 || m["s"] != "test" || m["f"] != true || len(m) != 4 {
		t.Fatalf("%s", got)
	}
	if string(argsFor(json.RawMessage(`{"type":"object"}`))) != "{}" {
		t.Fatal("a tool without required properties gets an empty object")
	}
}

func TestCovered(t *testing.T) {
	if !covered("a b", []string{"a", "b", "c"}) || covered("a d", []string{"a", "b"}) || covered("", nil) {
		t.Fatal("covered")
	}
}

func TestScratchURL(t *testing.T) {
	u, err := scratchURL("postgres://u@db:5432/guilds?sslmode=disable")
	if err != nil || u != "postgres://u@db:5432/"+ScratchDatabase+"?sslmode=disable" {
		t.Fatalf("%q %v", u, err)
	}
	if _, err := scratchURL("host=db dbname=guilds"); err == nil {
		t.Fatal("a keyword DSN is refused")
	}
}

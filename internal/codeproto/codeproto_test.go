package codeproto

import (
	"encoding/json"
	"testing"

	"github.com/guilds/guilds/sandbox/helper"
)

func TestRequestRoundTripsThroughBothForms(t *testing.T) {
	in := Request{Tool: "file_read", Args: json.RawMessage(`{"path":"a.go"}`), RunID: "r1", CallID: "c1", Step: 7,
		PriorReads: []PriorRead{{Path: "/home/agent/a.go", From: 1, To: 20, ContentHash: "ab", Step: 3}}}
	enc, err := helper.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(in)
	for _, form := range [][]byte{[]byte(enc), raw} {
		got, err := helper.Decode[Request](form)
		if err != nil {
			t.Fatal(err)
		}
		if got.Tool != in.Tool || got.Step != 7 || len(got.PriorReads) != 1 || string(got.Args) != string(in.Args) {
			t.Fatalf("round trip: %+v", got)
		}
	}
}

func TestDecodeRequestRefusesGarbageAndMissingTool(t *testing.T) {
	for _, s := range []string{"not base64!", "e30=" /* {} */} {
		if _, err := helper.Decode[Request]([]byte(s)); err == nil {
			t.Fatalf("%q: decoded", s)
		}
	}
}

func TestResponseRoundTrip(t *testing.T) {
	enc, err := helper.Encode(Response{Text: "wrote a.go (3 lines)", Meta: map[string]any{"lines": 3}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := helper.Decode[Response]([]byte(enc + "\n"))
	if err != nil || got.Text != "wrote a.go (3 lines)" || got.Meta["lines"] != float64(3) {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := helper.Decode[Response]([]byte("plain text")); err == nil {
		t.Fatal("plain text decoded")
	}
}

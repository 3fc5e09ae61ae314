package sealed

import (
	"slices"
	"strings"
	"testing"
)

// Sets keep their registration order, and a name registered twice is a
// programming error, so no table is rotated twice or reported twice.
func TestRegistryOrderAndDuplicates(t *testing.T) {
	r := NewRegistry(Table{Table: "a"}, Table{Table: "b"})
	r.Register(Table{Table: "c"})
	if got := r.Names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("names %v", got)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "b registered twice") {
			t.Fatalf("second b: panic %v", p)
		}
	}()
	r.Register(Table{Table: "b"})
}

// A rotation is complete only when no set has a value left under another key.
func TestStatsCompleteAndTotals(t *testing.T) {
	st := Stats{Tables: []Rotation{{Table: "a", Resealed: 2}, {Table: "b", Resealed: 1, Remaining: 1}}}
	if st.Complete() || st.Resealed() != 3 || st.Of("b").Remaining != 1 || st.Of("none").Table != "" {
		t.Fatalf("%+v: complete %v, resealed %d", st, st.Complete(), st.Resealed())
	}
	st.Tables[1].Remaining = 0
	if !st.Complete() {
		t.Fatal("no value left under another key, yet not complete")
	}
}

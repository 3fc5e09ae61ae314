package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func stub(name string) Tool {
	return Tool{Name: name, Schema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, Call) (string, error) { return "ok", nil }}
}

// Listed returns the catalogued tools in the order their families
// registered them, each with its family's listing unless it carries its own.
func TestFamilyListsItsToolsInRegistrationOrder(t *testing.T) {
	r := NewRegistry()
	b := r.Family(Listing{Family: "b", Group: "B", Gate: GateBinding, Flag: "memory"})
	b.Register(stub("zeta"))
	narrow := b.Listing()
	narrow.Triggers = []Trigger{TriggerDirect}
	t2 := stub("alpha")
	t2.Listing = narrow
	b.Register(t2)
	r.Register(stub("unlisted"))
	r.Family(Listing{Family: "a", Group: "A", Gate: GateAlways}).Register(stub("mid"))
	var names []string
	for _, tl := range r.Listed() {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"zeta", "alpha", "mid"}) {
		t.Fatalf("listed %v", names)
	}
	if got, _ := r.Lookup("alpha"); got.Listing.Flag != "memory" || !slices.Equal(got.Listing.Triggers, []Trigger{TriggerDirect}) {
		t.Fatalf("alpha listed as %+v", got.Listing)
	}
}

// A listing that cannot be offered is a programming error at registration.
func TestRegisterRefusesAnIncompleteListing(t *testing.T) {
	for _, c := range []struct {
		listing Listing
		want    string
	}{
		{Listing{Family: "f", Gate: GateBinding}, "display group"},
		{Listing{Family: "f", Group: "F", Gate: "sometimes"}, "unknown gate"},
		{Listing{Family: "f", Group: "F", Gate: GateCoding, Flag: "memory"}, "takes no flag"},
		{Listing{Family: "f", Group: "F", Gate: GateBinding, Triggers: []Trigger{"cron"}}, "unknown trigger"},
	} {
		func() {
			defer func() {
				p := recover()
				if p == nil || !strings.Contains(p.(string), c.want) {
					t.Errorf("%+v: panic %v, want one saying %q", c.listing, p, c.want)
				}
			}()
			tl := stub("x")
			tl.Listing = c.listing
			NewRegistry().Register(tl)
		}()
	}
}

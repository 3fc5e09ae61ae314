package tools

import "fmt"

// Gate says what, besides bindings, decides whether a native tool is offered.
type Gate string

// Gates of native tools.
const (
	GateBinding Gate = "binding" // offered when its binding resolves enabled
	GateBrowser Gate = "browser" // offered when the agent's browser flag is set; never a binding
	GateCoding  Gate = "coding"  // offered when the agent's coding flag is set; never a binding
	GateAlways  Gate = "always"  // always offered; never a binding
)

// Valid reports whether g is one of the declared gates.
func (g Gate) Valid() bool {
	switch g {
	case GateBinding, GateBrowser, GateCoding, GateAlways:
		return true
	}
	return false
}

// Trigger is what started a run (Call.Trigger).
type Trigger string

// Run triggers.
const (
	TriggerDirect   Trigger = "direct"
	TriggerGroup    Trigger = "group"
	TriggerSchedule Trigger = "schedule"
)

// Valid reports whether t is a known trigger.
func (t Trigger) Valid() bool {
	return t == TriggerDirect || t == TriggerGroup || t == TriggerSchedule
}

// Listing is a native tool's entry in the native catalog, declared by its
// family when it registers the tool: where operators see it and what,
// besides its implementation, decides whether a run offers it. The catalog
// (internal/grants) is the registered tools that carry one, in the order
// they were registered.
type Listing struct {
	Family string // the family's name ("notes"); a tool without one is not catalogued
	Group  string // display group of the Tools view ("Notes")
	Gate   Gate
	// Flag names the agent config flag that must also be on ("scripting",
	// "memory"); empty when none.
	Flag string
	// Triggers limits the run triggers; nil means every trigger.
	Triggers []Trigger
	// Integration names the box integration the tool needs; empty when none.
	Integration string
}

// Listed reports whether the tool is in the native catalog.
func (l Listing) Listed() bool { return l.Family != "" }

func (l Listing) check() error {
	if !l.Listed() {
		return nil
	}
	if l.Group == "" {
		return fmt.Errorf("family %q without a display group", l.Family)
	}
	if !l.Gate.Valid() {
		return fmt.Errorf("unknown gate %q", l.Gate)
	}
	if l.Gate != GateBinding && (l.Flag != "" || l.Triggers != nil || l.Integration != "") {
		return fmt.Errorf("gate %s takes no flag, trigger or integration: those narrow a binding", l.Gate)
	}
	for _, t := range l.Triggers {
		if !t.Valid() {
			return fmt.Errorf("unknown trigger %q", t)
		}
	}
	return nil
}

// Family registers the tools of one native family under the family's
// listing, so that each family declares its catalog entry once, where it
// registers its tools.
type Family struct {
	reg     *Registry
	listing Listing
}

// Family returns a registrar that lists every tool it registers with l.
func (r *Registry) Family(l Listing) Family { return Family{reg: r, listing: l} }

// Register registers t with the family's listing, unless t carries its own
// (a tool of the family with a narrower gate, flag or trigger).
func (f Family) Register(t Tool) {
	if !t.Listing.Listed() {
		t.Listing = f.listing
	}
	f.reg.Register(t)
}

// Listing returns the family's listing, for a tool that narrows it.
func (f Family) Listing() Listing { return f.listing }

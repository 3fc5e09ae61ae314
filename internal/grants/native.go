package grants

import "github.com/guilds/guilds/internal/tools"

// Gate says what, besides bindings, decides whether a native tool is
// offered; each family declares its tools' gate when it registers them.
type Gate = tools.Gate

// Gates of native tools.
const (
	GateBinding = tools.GateBinding // offered when its binding resolves enabled
	GateBrowser = tools.GateBrowser // offered when the agent's browser flag is set; never a binding
	GateCoding  = tools.GateCoding  // offered when the agent's coding flag is set; never a binding
	GateAlways  = tools.GateAlways  // always offered; never a binding
)

// NativeTool is one entry of the native catalog: a registered tool's name,
// class and listing (family, group, gate, flag, triggers, integration), as
// its family declared them when it registered.
type NativeTool struct {
	Name   string      `json:"name"`
	Family string      `json:"family"`
	Group  string      `json:"group"` // display group of the Tools view
	Gate   Gate        `json:"gate"`
	Class  tools.Class `json:"-"`
	// Flag names the agent config flag that must also be on ("scripting",
	// "memory"); empty when none.
	Flag string `json:"flag,omitempty"`
	// Triggers limits the run triggers; nil means every trigger.
	Triggers []Trigger `json:"triggers,omitempty"`
	// Integration names the box integration the tool needs; empty when none.
	Integration string `json:"integration,omitempty"`
}

// IsBinding reports whether operators switch the tool with bindings.
func (n NativeTool) IsBinding() bool { return n.Gate == GateBinding }

// nativeCatalog is the native catalog of one registry, in display order
// (the order the families registered their tools), with an index by name.
type nativeCatalog struct {
	tools  []NativeTool
	byName map[string]NativeTool
}

// catalogOf reads the native catalog from the tools registered with a
// listing; nil has none.
func catalogOf(reg *tools.Registry) nativeCatalog {
	c := nativeCatalog{byName: map[string]NativeTool{}}
	if reg == nil {
		return c
	}
	for _, t := range reg.Listed() {
		l := t.Listing
		n := NativeTool{Name: t.Name, Family: l.Family, Group: l.Group, Gate: l.Gate, Class: t.Class,
			Flag: l.Flag, Triggers: l.Triggers, Integration: l.Integration}
		c.tools = append(c.tools, n)
		c.byName[n.Name] = n
	}
	return c
}

// NativeCatalog returns the native tool catalog of reg in display order.
func NativeCatalog(reg *tools.Registry) []NativeTool { return catalogOf(reg).tools }

// lookup returns the catalog entry of a native tool name.
func (c nativeCatalog) lookup(name string) (NativeTool, bool) {
	n, ok := c.byName[name]
	return n, ok
}

// bindingNames lists the tools operators switch with bindings.
func (c nativeCatalog) bindingNames() []string {
	var names []string
	for _, n := range c.tools {
		if n.IsBinding() {
			names = append(names, n.Name)
		}
	}
	return names
}

// ArtifactGrant names, with the state they have when no binding says otherwise.
var artifactDefaults = []struct {
	Name string
	On   bool
}{{"read_guild", true}, {"read_org", true}, {"write_guild", true}, {"write_org", false}}

func isArtifactGrant(id string) bool {
	for _, a := range artifactDefaults {
		if a.Name == id {
			return true
		}
	}
	return false
}

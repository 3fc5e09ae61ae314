package grants

import "github.com/guilds/guilds/internal/tools"

// Gate says what, besides bindings, decides whether a native tool is offered.
type Gate string

const (
	GateBinding Gate = "binding" // offered when its binding resolves enabled
	GateBrowser Gate = "browser" // offered when the agent's browser flag is set; never a binding
	GateCoding  Gate = "coding"  // offered when the agent's coding flag is set; never a binding
	GateAlways  Gate = "always"  // always offered; never a binding
)

// NativeTool is one entry of the native catalog: a name, its family and its
// gating. The implementation comes from a *tools.Registry.
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

func family(fam, group string, gate Gate, class tools.Class, names ...string) []NativeTool {
	out := make([]NativeTool, len(names))
	for i, n := range names {
		out[i] = NativeTool{Name: n, Family: fam, Group: group, Gate: gate, Class: class}
	}
	return out
}

func with(list []NativeTool, f func(*NativeTool)) []NativeTool {
	for i := range list {
		f(&list[i])
	}
	return list
}

// nativeCatalog is the catalog of native tools in display order.
var nativeCatalog = func() []NativeTool {
	var all []NativeTool
	add := func(l []NativeTool) { all = append(all, l...) }
	add(family("notes", "Notes", GateBinding, tools.ClassDefault, "note_find", "note_get", "note_write", "note_delete"))
	add(family("records", "Records", GateBinding, tools.ClassDefault,
		"record_search", "record_list", "record_add", "record_update", "record_remove"))
	add(with(family("memory", "Memory", GateBinding, tools.ClassDefault, "memory_write"),
		func(n *NativeTool) { n.Flag = "memory" }))
	scripts := with(family("scripts", "Scripts", GateBinding, tools.ClassScript,
		"script_create", "script_list", "script_read", "script_run", "script_delete"),
		func(n *NativeTool) { n.Flag = "scripting" })
	// script_run waits for a script's 120 s and its stop: the shell class's activity timeout holds that.
	scripts[3].Class = tools.ClassShell
	add(scripts)
	add(with(family("schedules", "Schedules", GateBinding, tools.ClassDefault,
		"schedule_create_cron", "schedule_create_window", "schedule_list", "schedule_pause", "schedule_resume", "schedule_delete"),
		func(n *NativeTool) { n.Triggers = []Trigger{TriggerDirect, TriggerGroup} }))
	add(family("secrets", "Secrets", GateBinding, tools.ClassDefault, "secret_store"))
	add(with(family("secrets", "Secrets", GateBinding, tools.ClassScript, "secret_request"),
		func(n *NativeTool) { n.Triggers = []Trigger{TriggerDirect} }))
	add(with(family("search", "Web search", GateBinding, tools.ClassDefault, "tavily_search"),
		func(n *NativeTool) { n.Integration = "web-search" }))
	add(family("group", "Group chat", GateBinding, tools.ClassDefault, "group_post"))
	add(family("issues", "Issues", GateAlways, tools.ClassDefault, "report_issue"))
	add(family("browser", "Browser", GateBrowser, tools.ClassBrowser,
		"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_fill",
		"browser_scroll", "browser_screenshot", "browser_eval"))
	code := family("code", "Code", GateCoding, tools.ClassCode,
		"shell", "shell_status", "file_read", "file_edit", "file_write", "code_search", "code_match",
		"code_map", "code_find", "code_outline", "code_callers")
	code[0].Class = tools.ClassShell
	add(code)
	return all
}()

var nativeByName = func() map[string]NativeTool {
	m := make(map[string]NativeTool, len(nativeCatalog))
	for _, n := range nativeCatalog {
		m[n.Name] = n
	}
	return m
}()

// NativeCatalog returns the native tool catalog in display order.
func NativeCatalog() []NativeTool { return append([]NativeTool(nil), nativeCatalog...) }

// LookupNative returns the catalog entry of a native tool name.
func LookupNative(name string) (NativeTool, bool) {
	n, ok := nativeByName[name]
	return n, ok
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

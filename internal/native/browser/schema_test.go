package browser

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
)

func TestEightToolsOfTheBrowserFamily(t *testing.T) {
	reg := tools.NewRegistry()
	Register(reg, Deps{})
	var family []string
	for _, n := range grants.NativeCatalog() {
		if n.Gate == grants.GateBrowser {
			family = append(family, n.Name)
		}
	}
	if !slices.Equal(family, Names) || len(reg.All()) != 8 {
		t.Fatalf("the grants' browser family %v, Names %v, registered %d", family, Names, len(reg.All()))
	}
	for _, n := range Names {
		tl, ok := reg.Lookup(n)
		if !ok || tl.Class != tools.ClassBrowser || tl.Description == "" {
			t.Errorf("%s: %+v", n, tl)
		}
	}
}

// Every refused argument names its field, and nothing reaches a workspace.
func TestBadArgumentsNameTheirField(t *testing.T) {
	reg := tools.NewRegistry()
	Register(reg, Deps{})
	for _, c := range []struct{ tool, args, field string }{
		{ToolNavigate, `{}`, "url"},
		{ToolNavigate, `{"url":""}`, "/url"},
		{ToolClick, `{}`, "ref"},
		{ToolClick, `{"ref":"submit"}`, "/ref"},
		{ToolType, `{"ref":"e1"}`, "text"},
		{ToolFill, `{"ref":"e1"}`, "value"},
		{ToolScroll, `{"direction":"sideways"}`, "/direction"},
		{ToolScroll, `{}`, "direction"},
		{ToolEval, `{"script":""}`, "/script"},
		{ToolSnapshot, `{"full":true}`, "full"},
	} {
		got := reg.Invoke(context.Background(), tools.Call{Name: c.tool, Args: []byte(c.args), RunID: "r", AgentID: "a"})
		if !strings.HasPrefix(got, "ERROR: invalid arguments") || !strings.Contains(got, c.field) {
			t.Errorf("%s %s: %q does not name %s", c.tool, c.args, got, c.field)
		}
	}
	if got := reg.Invoke(context.Background(), tools.Call{Name: ToolSnapshot, Args: []byte(`{}`), RunID: "r", AgentID: "a"}); !strings.Contains(got, sandbox.ErrNoWorkspace.Error()) {
		t.Errorf("without a workspace: %q", got)
	}
}

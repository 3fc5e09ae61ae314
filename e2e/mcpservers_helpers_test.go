package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/testproc"
)

// suiteDir holds the published MCP servers' package.json and lockfile;
// .ci/run installs them there with npm ci.
const suiteDir = "mcpservers"

// suite is where the published servers are installed and the node that runs them.
type suite struct {
	node    string
	modules string // absolute path of suiteDir/node_modules
}

// needSuite finds the installed servers. Outside CI a machine without them
// skips the test with what to run; in CI their absence is a failure.
func needSuite(t *testing.T) suite {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed: the published MCP servers need it")
	}
	modules, err := filepath.Abs(filepath.Join(suiteDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, ".package-lock.json")); err != nil {
		skip("the published MCP servers are not installed: run `npm ci` in e2e/%s", suiteDir)
	}
	return suite{node: node, modules: modules}
}

// bin is the entry point of an installed package's command.
func (s suite) bin(pkg, rel string) string { return filepath.Join(s.modules, pkg, rel) }

// sharedDir makes a directory a stdio server may read and write: as root the
// platform runs stdio servers as nobody, who cannot enter a test's 0700
// temporary directories. It is removed when the test ends.
func sharedDir(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "guilds-mcpsuite-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startServerProcess runs a published server that listens on HTTP (the test
// starts it; the platform only knows its URL) and returns once it printed
// that it listens on port. Its process group is killed when the test ends.
func startServerProcess(t *testing.T, port int, env []string, name string, args ...string) *testproc.Output {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	// server-everything: "… listening on port N"; Playwright: "Listening on http://localhost:N".
	out := testproc.Start(t, cmd, "listening on ")
	if !strings.Contains(out.String(), strconv.Itoa(port)) {
		t.Fatalf("%s listens elsewhere than on %d:\n%s", name, port, out)
	}
	return out
}

// refTool is a tool as the reference client lists it.
type refTool struct {
	Description string
	Properties  []string // the argument schema's property names, sorted
	Required    []string
}

// referenceListing lists a server's tools with mcp-go's client, the
// reference the platform's listing is compared with.
func referenceListing(t *testing.T, c *client.Client) map[string]refTool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	defer func() { _ = c.Close() }()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("reference client: start: %v", err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "guilds-e2e-reference", Version: "1"}
	// The platform answers forms (elicitation), and some servers list more
	// tools to a client that does: declare the same.
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("reference client: initialize: %v", err)
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("reference client: tools/list: %v", err)
	}
	out := map[string]refTool{}
	for _, tl := range res.Tools {
		schema := tl.RawInputSchema
		if schema == nil {
			schema, _ = json.Marshal(tl.InputSchema)
		}
		out[tl.Name] = refToolOf(tl.Description, schema)
	}
	return out
}

func refToolOf(description string, schema json.RawMessage) refTool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	r := refTool{Description: description, Required: append([]string{}, s.Required...)}
	for k := range s.Properties {
		r.Properties = append(r.Properties, k)
	}
	sort.Strings(r.Properties)
	sort.Strings(r.Required)
	return r
}

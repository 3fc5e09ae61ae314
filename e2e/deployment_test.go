package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testlog"
	"github.com/guilds/guilds/internal/testtemporal"
)

// binary is the guilds binary built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "guilds-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "guilds")
	build := exec.Command("go", "build", "-o", binary, "github.com/guilds/guilds/cmd/guilds")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building guilds:", err)
		os.Exit(1)
	}
	code := testtemporal.Main(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// consulted makes the test cache treat the binary's sources as inputs: the
// binary is built from the whole module, which this package does not import,
// and `go test` records only the files a running test consults (TestMain's
// own reads happen before recording starts). Every test calls it through deploy.
var consulted = sync.OnceValue(func() error { return consultSources("..") })

// consultSources stats every file the guilds binary is built from (Go
// sources, go.mod and go.sum, embedded SQL and JSON), so that the test cache,
// which keys a result on the files a test consulted, treats them as inputs.
func consultSources(root string) error {
	return filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "tools" || name == "e2e" || name == "node_modules" || name == "results") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(name, "_test.go"):
		case strings.HasSuffix(name, ".go"), strings.HasSuffix(name, ".sql"), strings.HasSuffix(name, ".json"), name == "go.mod", name == "go.sum":
			_, err = os.Stat(path)
		}
		return err
	})
}

// deployment is the platform as production runs it: `guilds migrate up`,
// then `guilds serve` and `guilds worker` as separate processes of the same
// binary, on a database and a Temporal namespace no one has used before.
type deployment struct {
	t         *testing.T
	vars      map[string]string // the platform's variables, on top of the test's environment
	base      []string          // the test's environment, less what vars sets
	procs     map[string]*process
	API       string // http://127.0.0.1:port
	Token     string // an instance admin's API token
	Namespace string
	Temporal  client.Client // on the deployment's namespace, for reading histories
	Browser   *http.Client  // the operator's browser: a cookie jar, redirects followed
	logs      map[string]*testlog.Buffer
	secrets   []string // values that must never surface: the encryption key…
}

// deploy starts a deployment with extra environment variables.
func deploy(t *testing.T, extra map[string]string) *deployment {
	t.Helper()
	return deployOn(t, testtemporal.Address(t), extra)
}

// deployOn starts a deployment on the Temporal frontend at temporal.
func deployOn(t *testing.T, temporal string, extra map[string]string) *deployment {
	t.Helper()
	if err := consulted(); err != nil {
		t.Fatal(err)
	}
	d := &deployment{t: t, logs: map[string]*testlog.Buffer{}, procs: map[string]*process{}}
	encKey := d.newKey()

	port := freePort(t)
	d.API = fmt.Sprintf("http://127.0.0.1:%d", port)
	d.Namespace = freshNamespace(t, temporal)
	vars := map[string]string{
		"DATABASE_URL":               freshDatabase(t),
		"TEMPORAL_ADDRESS":           temporal,
		"TEMPORAL_NAMESPACE":         d.Namespace,
		"GUILDS_HTTP_ADDR":           fmt.Sprintf("127.0.0.1:%d", port),
		"GUILDS_ENCRYPTION_KEY":      "k1:" + encKey,
		"GUILDS_DATA_DIR":            t.TempDir(),
		"GUILDS_OAUTH_ALLOW_PRIVATE": "1", // the fake peers listen on loopback
		// The worker removes the sandboxes of its scope it does not hold at
		// start: a deployment's own scope keeps it off everyone else's.
		"GUILDS_SANDBOX_SCOPE": d.Namespace,
	}
	for k, v := range extra {
		vars[k] = v
	}
	d.vars = vars
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, set := vars[name]; !set && !strings.HasPrefix(name, "GUILDS_") && name != "TEMPORAL_ADDRESS" {
			d.base = append(d.base, kv)
		}
	}

	if out, err := d.command("migrate", "up").CombinedOutput(); err != nil {
		t.Fatalf("guilds migrate up: %v\n%s", err, out)
	}
	out, err := d.command("tokens", "create", "--admin", "--name", "e2e").Output()
	if err != nil {
		t.Fatalf("guilds tokens create: %v", err)
	}
	d.Token = strings.TrimSpace(string(out))
	d.start("serve")
	d.start("worker")
	d.waitReady(0)

	c, err := client.Dial(client.Options{HostPort: temporal, Namespace: d.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	d.Temporal = c
	jar, _ := cookiejar.New(nil)
	d.Browser = &http.Client{Jar: jar, Timeout: time.Minute}
	return d
}

// newKey returns a fresh 32-byte encryption key, base64, and remembers it as
// a value that must never surface.
func (d *deployment) newKey() string {
	key := make([]byte, 32)
	rand.Read(key)
	k := base64.StdEncoding.EncodeToString(key)
	d.secrets = append(d.secrets, k)
	return k
}

func (d *deployment) command(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string(nil), d.base...)
	for k, v := range d.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// process is a running long-lived subcommand.
type process struct {
	cmd    *exec.Cmd
	exited chan error
}

// start runs a long-lived subcommand until stop or the end of the test. Its
// output is appended to the logs kept under its name, across restarts.
func (d *deployment) start(name string) { d.startAs(name, name, nil) }

// startAs runs the subcommand sub as a process named name (a second replica:
// "serve-2"), with over set on top of the deployment's variables.
func (d *deployment) startAs(name, sub string, over map[string]string) {
	t := d.t
	logs := d.logs[name]
	if logs == nil {
		logs = &testlog.Buffer{}
		d.logs[name] = logs
	}
	cmd := d.command(sub)
	for k, v := range over {
		cmd.Env = append(cmd.Env, k+"="+v) // the last of a name wins
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("guilds %s: %v", name, err)
	}
	p := &process{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	d.procs[name] = p
	t.Cleanup(func() { d.stop(name) })
}

// stop interrupts a subcommand, as an operator's Ctrl-C or a container stop
// would, and checks that it exits cleanly.
func (d *deployment) stop(name string) {
	t := d.t
	p := d.procs[name]
	if p == nil {
		return
	}
	delete(d.procs, name)
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("guilds %s stopped with %v:\n%s", name, err, d.logs[name])
		}
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		t.Errorf("guilds %s did not stop on SIGINT", name)
	}
}

// waitReady polls /readyz until the API answers 200 and the worker's log,
// past its first from bytes, says it started.
func (d *deployment) waitReady(from int) {
	t := d.t
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(d.API + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(d.logs["worker"].String()[from:], "worker started") {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the deployment did not become ready\nserve:\n%s\nworker:\n%s", d.logs["serve"], d.logs["worker"])
}

// restart stops serve and worker, applies vars (an empty value unsets the
// variable), and starts them again.
func (d *deployment) restart(vars map[string]string) {
	d.stop("serve")
	d.stop("worker")
	for k, v := range vars {
		if v == "" {
			delete(d.vars, k)
		} else {
			d.vars[k] = v
		}
	}
	from := len(d.logs["worker"].String())
	d.start("serve")
	d.start("worker")
	d.waitReady(from)
}

// reply is an API answer.
type reply struct {
	Status int
	Body   []byte
}

func (r reply) Map() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Call sends a request with the admin token through the operator's browser
// (so cookies the API sets come back on later requests).
func (d *deployment) Call(method, path string, body any) reply {
	d.t.Helper()
	return d.callAt(d.API, method, path, body)
}

// callAt is Call on the API replica at api.
func (d *deployment) callAt(api, method, path string, body any) reply {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, api+path, rd)
	req.Header.Set("Authorization", "Bearer "+d.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.Browser.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, raw}
}

// must is Call that fails the test unless the status is one of want.
func (d *deployment) must(want int, method, path string, body any) map[string]any {
	d.t.Helper()
	return d.mustAt(d.API, want, method, path, body)
}

// mustAt is must on the API replica at api.
func (d *deployment) mustAt(api string, want int, method, path string, body any) map[string]any {
	d.t.Helper()
	r := d.callAt(api, method, path, body)
	if r.Status != want {
		d.t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	return r.Map()
}

// Logs is everything serve and worker wrote.
func (d *deployment) Logs() string {
	var b strings.Builder
	for name, l := range d.logs {
		b.WriteString("== " + name + "\n" + l.String())
	}
	return b.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// freshDatabase names a database that does not exist yet: `guilds migrate up`
// creates it, as on a new install. It is dropped when the test ends.
func freshDatabase(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("guilds_e2e_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	u, err := url.Parse(testdb.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, testdb.ServerURL()); err == nil {
			c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") //nolint:errcheck
			_ = c.Close(ctx)
		}
	})
	return u.String()
}

// freshNamespace registers a namespace on the test Temporal server, without
// the platform's search attributes, and waits until it answers.
func freshNamespace(t *testing.T, temporal string) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%d-%d", os.Getpid(), time.Now().UnixNano()%1e9)
	nc, err := client.NewNamespaceClient(client.Options{HostPort: temporal})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: name, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := nc.Describe(ctx, name); err == nil {
			return name
		}
		select {
		case <-ctx.Done():
			t.Fatalf("namespace %s never became usable", name)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

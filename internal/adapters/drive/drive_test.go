package drive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/drive"
	"github.com/guilds/guilds/internal/adapters/drive/drivetest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/workspacefiles"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox/dockertest"
)

const token = "ya29.fake-google-token-1234567890"

// tree is drivetest's Tree with a login that chose proj.
func tree(t *testing.T) (*drivetest.Fake, adapters.Conn) {
	d := drivetest.New(t, token)
	d.Tree()
	return d, adapters.Conn{BaseURL: d.URL + "/drive/v3", Cred: connectors.Credential{AccessToken: token},
		Settings: map[string]string{drive.FieldFolderID: "proj", drive.FieldFolderName: "Project X"}}
}

func call(t *testing.T, ctx context.Context, c adapters.Conn, tool, args string) (string, error) {
	t.Helper()
	out, err := (&drive.Adapter{}).Call(ctx, c, tool, json.RawMessage(args))
	for _, leak := range append([]string{drivetest.Secret, token}, drivetest.Outside...) {
		if strings.Contains(out, leak) || (err != nil && strings.Contains(err.Error(), leak)) {
			t.Fatalf("%s %s revealed %q: %q %v", tool, args, leak, out, err)
		}
	}
	return out, err
}

func ids(out string) []string {
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		got = append(got, strings.Split(l, "\t")[0])
	}
	return got
}

func TestFolderChoice(t *testing.T) {
	d, c := tree(t)
	ctx := context.Background()
	folders, err := drive.Folders(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range folders {
		got = append(got, f.Place+":"+f.ID)
	}
	if strings.Join(got, " ") != "my_drive:proj my_drive:other shared_with_me:shared shared_drive:sd1" {
		t.Fatalf("folders %v", got)
	}
	for id, want := range map[string]string{"root": "My Drive cannot be chosen", "root-id": "My Drive cannot be chosen",
		"plan": "is not a folder", "nope": "sees no folder", "../x": "is not a Drive file id"} {
		if _, err := drive.CheckFolder(ctx, c, id); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckFolder(%s): %v, want %q", id, err, want)
		}
	}
	if f, err := drive.CheckFolder(ctx, c, "sd1"); err != nil || f.Place != "shared_drive" {
		t.Fatalf("a shared drive: %+v %v", f, err)
	}
	a := &drive.Adapter{}
	if hint, err := a.Check(ctx, c); err != nil || hint != "Project X" {
		t.Fatalf("Check: %q %v", hint, err)
	}
	c.Settings = nil
	if _, err := a.Check(ctx, c); !errors.Is(err, drive.ErrNoFolder) {
		t.Fatalf("no folder: %v", err)
	}
	if _, err := a.Call(ctx, c, "search_files", json.RawMessage(`{"query":"plan"}`)); !errors.Is(err, drive.ErrNoFolder) {
		t.Fatalf("call without a folder: %v", err)
	}
	bad := adapters.Conn{BaseURL: d.URL + "/drive/v3", Cred: connectors.Credential{AccessToken: "revoked-token-123"}}
	if _, err := drive.Folders(ctx, bad); !adapters.Rejected(err) {
		t.Fatalf("a refused token: %v", err)
	}
}

func TestEveryCallStaysInTheFolder(t *testing.T) {
	d, c := tree(t)
	ctx := context.Background()
	out, err := call(t, ctx, c, "search_files", `{"query":"plan"}`)
	if err != nil || strings.Join(ids(out), ",") != "plan,deep" {
		t.Fatalf("search: %q %v", out, err)
	}
	// Asked over every drive, with the shared-drive flags.
	var listed bool
	for _, u := range d.Seen() {
		q := u.Query()
		if u.Path == "/drive/v3/files" && strings.Contains(q.Get("q"), "fullText contains 'plan'") {
			listed = q.Get("corpora") == "allDrives" && q.Get("includeItemsFromAllDrives") == "true" && q.Get("supportsAllDrives") == "true"
		}
	}
	if !listed {
		t.Fatal("search_files did not list with corpora=allDrives and the shared-drive flags")
	}
	if out, err := call(t, ctx, c, "search_files", `{"query":"it's"}`); err != nil || len(ids(out)) != 0 {
		t.Fatalf("a quote in the query: %q %v", out, err)
	}
	if out, err := call(t, ctx, c, "list_recent_files", `{}`); err != nil || strings.Join(ids(out), ",") != "logo,deep,plan" {
		t.Fatalf("recent: %q %v", out, err)
	}
	if out, err := call(t, ctx, c, "read_file_content", `{"file_id":"plan"}`); err != nil || out != "the plan: ship" {
		t.Fatalf("read: %q %v", out, err)
	}
	if out, err := call(t, ctx, c, "read_file_content", `{"file_id":"deep"}`); err != nil || out != "[plan doc as text/plain] deep plan text" {
		t.Fatalf("read a doc: %q %v", out, err)
	}
	if _, err := call(t, ctx, c, "read_file_content", `{"file_id":"logo"}`); err == nil || !strings.Contains(err.Error(), "download_file_content") {
		t.Fatalf("read a png: %v", err)
	}
	if out, err := call(t, ctx, c, "get_file_metadata", `{"file_id":"deep"}`); err != nil || !strings.Contains(out, "deep\tplan doc\t") {
		t.Fatalf("metadata: %q %v", out, err)
	}
	if out, err := call(t, ctx, c, "get_file_permissions", `{"file_id":"plan"}`); err != nil || !strings.Contains(out, "user\towner\towner@acme.example") {
		t.Fatalf("permissions: %q %v", out, err)
	}
	// Outside the folder (or trashed): the same answer as a file that does not exist.
	for _, id := range []string{"hidden1", "otherplan", "sdplan", "sharedplan", "other", "root-id", "old", "missing"} {
		for _, tool := range []string{"read_file_content", "get_file_metadata", "get_file_permissions", "copy_file"} {
			_, err := (&drive.Adapter{}).Call(ctx, c, tool, json.RawMessage(`{"file_id":"`+id+`"}`))
			if err == nil || err.Error() != "file_id: no file "+id+" in this login's folder" {
				t.Errorf("%s %s: %v", tool, id, err)
			}
		}
	}
	// Writes land inside only.
	if out, err := call(t, ctx, c, "copy_file", `{"file_id":"plan","parent_id":"sub","name":"plan v2.txt"}`); err != nil || !strings.Contains(out, "\tplan v2.txt\t") {
		t.Fatalf("copy: %q %v", out, err)
	}
	for _, parent := range []string{"other", "sd1", "shared", "root-id", "plan"} {
		if _, err := call(t, ctx, c, "copy_file", `{"file_id":"plan","parent_id":"`+parent+`"}`); err == nil || !strings.Contains(err.Error(), "parent_id") {
			t.Errorf("copy into %s: %v", parent, err)
		}
		if _, err := call(t, ctx, c, "create_file", `{"name":"x.txt","text_content":"x","parent_id":"`+parent+`"}`); err == nil || !strings.Contains(err.Error(), "parent_id") {
			t.Errorf("create in %s: %v", parent, err)
		}
	}
	if out, err := call(t, ctx, c, "create_file", `{"name":"notes.txt","textContent":"hello"}`); err != nil || !strings.Contains(out, "\tnotes.txt\ttext/plain\t") {
		t.Fatalf("create: %q %v", out, err)
	}
	writes := strings.Join(d.Writes(), "; ")
	if writes != "copy plan -> sub; create notes.txt -> proj" {
		t.Fatalf("writes: %s", writes)
	}
	for args, want := range map[string]string{
		`{"name":"a","textContent":"x","file_path":"a.txt"}`:              "not both",
		`{"name":"","text_content":"x"}`:                                  "name:",
		`{"name":"a"}`:                                                    "file_path is required",
		`{"name":"a","textContent":"` + strings.Repeat("x", 70000) + `"}`: "at most 65536 bytes",
		`{"name":"a","file_path":"/etc/passwd"}`:                          "outside the workspace",
	} {
		if _, err := call(t, ctx, c, "create_file", args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("create_file %.60s: %v, want %q", args, err, want)
		}
	}
	if _, err := call(t, ctx, c, "delete_file", `{"file_id":"plan"}`); err == nil || !strings.Contains(err.Error(), `no tool "delete_file"`) {
		t.Fatalf("delete: %v", err)
	}
}

// create_file and download_file_content with the agent's workspace on the
// real sandbox image.
func TestFilesMoveThroughTheWorkspace(t *testing.T) {
	drv, cli := dockertest.Driver(t)
	image := dockertest.AgentImage(t, cli)
	mgr := workspaces.New(drv, workspaces.Options{Image: image, Logger: slog.New(slog.DiscardHandler)})
	agent := fmt.Sprintf("drive-files-agent-%d", os.Getpid()) // its own home beside a concurrent test run
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = mgr.RemoveHome(ctx, agent)
		_ = mgr.Close(ctx)
	})
	ctx := workspacefiles.With(context.Background(), mgr, agent)
	d, c := tree(t)
	pdf := []byte("%PDF-1.4\nreport")
	if err := mgr.CopyTo(ctx, agent, "/home/agent/out/report.bin", pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := call(t, ctx, c, "create_file", `{"name":"report.pdf","file_path":"out/report.bin","parent_id":"sub"}`)
	if err != nil || !strings.Contains(out, "\treport.pdf\tapplication/pdf\t") {
		t.Fatalf("create from the workspace: %q %v", out, err)
	}
	created, _ := d.Content("report.pdf")
	if string(created) != string(pdf) {
		t.Fatalf("uploaded %q", created)
	}
	out, err = call(t, ctx, c, "download_file_content", `{"file_id":"deep","file_path":"docs/deep.pdf"}`)
	if err != nil || !strings.HasPrefix(strings.Split(out, "\n")[1], "/home/agent/docs/deep.pdf\t") || strings.Contains(out, "deep plan text") {
		t.Fatalf("download: %q %v", out, err)
	}
	f, err := mgr.CopyFrom(ctx, agent, "/home/agent/docs/deep.pdf")
	if err != nil || string(f.Content) != "[plan doc as application/pdf] deep plan text" {
		t.Fatalf("downloaded file: %q %v", f.Content, err)
	}
	for args, want := range map[string]string{
		`{"file_id":"plan","file_path":"/tmp/x"}`:          "file_path: \"/tmp/x\" is outside the workspace",
		`{"file_id":"hidden1","file_path":"docs/x.txt"}`:   "no file hidden1 in this login's folder",
		`{"file_id":"plan","file_path":"../../etc/hosts"}`: "outside the workspace",
	} {
		_, err := (&drive.Adapter{}).Call(ctx, c, "download_file_content", json.RawMessage(args))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("download %s: %v, want %q", args, err, want)
		}
	}
	if _, err := mgr.CopyFrom(ctx, agent, "/home/agent/docs/x.txt"); err == nil {
		t.Fatal("a refused download wrote its file")
	}
}

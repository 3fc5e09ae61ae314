package codeops

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/guilds/guilds/internal/codeproto"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestFileReadTable(t *testing.T) {
	env := testEnv(t)
	writeTestFile(t, env, "repos/app/small.go", "package app\n\nfunc A() {}\n")
	writeTestFile(t, env, "repos/app/long.txt", numbered(600))
	writeTestFile(t, env, "repos/app/wide.txt", "short\n"+strings.Repeat("x", 450)+"\n")
	writeTestFile(t, env, "repos/app/crlf.txt", "a\r\nb\r\n")
	writeTestFile(t, env, "repos/app/empty.txt", "")
	writeTestFile(t, env, "repos/app/blob.bin", "PK\x03\x04\x00\x00binary")
	writeTestFile(t, env, "notes.md", "note\n")
	must(t, env.SetCwd(filepath.Join(env.Home, "repos/app")))

	for _, tc := range []struct{ args, want string }{
		{`{"path":"small.go"}`, "small.go · lines 1–3 of 3\n1\tpackage app\n2\t\n3\tfunc A() {}"},
		{`{"path":"long.txt","offset":599}`, "long.txt · lines 599–600 of 600\n599\tline 599\n600\tline 600"},
		{`{"path":"long.txt","offset":10,"limit":2}`, "long.txt · lines 10–11 of 600\n10\tline 10\n11\tline 11\n[continue with offset 12]"},
		{`{"path":"wide.txt","offset":2}`, "wide.txt · lines 2–2 of 2\n2\t" + strings.Repeat("x", 400) + " … [50 more characters]"},
		{`{"path":"crlf.txt"}`, "crlf.txt · lines 1–2 of 2\n1\ta\n2\tb"},
		{`{"path":"empty.txt"}`, "empty.txt is empty (0 lines)"},
		{`{"path":"blob.bin"}`, "blob.bin is a binary file (12 bytes); not shown"},
		{`{"path":"/home/agent/notes.md"}`, "/home/agent/notes.md · lines 1–1 of 1\n1\tnote"},
		{`{"path":"../../notes.md"}`, "/home/agent/notes.md · lines 1–1 of 1\n1\tnote"},
		{`{"path":"long.txt","offset":601}`, "ERROR: offset: 601 is past the end of long.txt (600 lines)"},
		{`{"path":"long.txt","limit":501}`, "ERROR: limit: 501 is out of range (1 to 500, default 200)"},
		{`{"path":"long.txt","offset":-1}`, "ERROR: offset: -1 is not a line number"},
		{`{"path":"missing.go"}`, "ERROR: path: missing.go does not exist"},
		{`{"path":"/etc/passwd"}`, "ERROR: path: /etc/passwd is outside /home/agent"},
		{`{"path":""}`, "ERROR: path: is empty"},
		{`{"path":"small.go","limit":"ten"}`, "ERROR: limit: must be a number, not string"},
		{`{"path":["a"]}`, "ERROR: path: must be a string, not array"},
		{`{"path":"."}`, "ERROR: path: . is a folder"},
	} {
		res := call(t, env, FileRead, tc.args)
		if !strings.HasPrefix(res.Text, tc.want) || (!strings.HasPrefix(tc.want, "ERROR") && res.Text != tc.want) {
			t.Errorf("%s:\n%q\nwant\n%q", tc.args, res.Text, tc.want)
		}
	}
	res := call(t, env, FileRead, `{"path":"long.txt"}`)
	if res.Meta["path"] != "/home/agent/repos/app/long.txt" || res.Meta["lines"] != 600 ||
		fmt.Sprint(res.Meta["range"]) != "[1 200]" || len(res.Meta["content_hash"].(string)) != 64 {
		t.Fatalf("meta %v", res.Meta)
	}
	if !strings.HasSuffix(res.Text, "200\tline 200\n[continue with offset 201]") {
		t.Fatalf("%q", res.Text[len(res.Text)-80:])
	}
}

func TestFileReadStopsBeforeTheCap(t *testing.T) {
	env := testEnv(t)
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "%03d %s\n", i, strings.Repeat("y", 90))
	}
	writeTestFile(t, env, "big.txt", b.String())
	res := call(t, env, FileRead, `{"path":"big.txt","limit":300}`)
	if len(res.Text) > env.MaxBytes() {
		t.Fatalf("%d bytes", len(res.Text))
	}
	r := res.Meta["range"].([]int)
	if r[0] != 1 || r[1] >= 300 || r[1] < 50 {
		t.Fatalf("range %v", r)
	}
	want := fmt.Sprintf("[stopped at the 8192 byte cap; continue with offset %d]", r[1]+1)
	if !strings.HasSuffix(res.Text, want) || !strings.HasPrefix(res.Text, fmt.Sprintf("big.txt · lines 1–%d of 300\n", r[1])) {
		t.Fatalf("%q", res.Text[:60]+" ... "+res.Text[len(res.Text)-80:])
	}
	// The continuation picks up exactly there.
	next := call(t, env, FileRead, fmt.Sprintf(`{"path":"big.txt","offset":%d,"limit":20}`, r[1]+1))
	if !strings.Contains(next.Text, fmt.Sprintf("%d\t%03d ", r[1]+1, r[1]+1)) {
		t.Fatalf("%q", next.Text[:100])
	}
}

func TestFileReadRepeated(t *testing.T) {
	env := testEnv(t)
	writeTestFile(t, env, "a.txt", numbered(300))
	first := call(t, env, FileRead, `{"path":"a.txt"}`)
	prior := codeproto.PriorRead{Path: first.Meta["path"].(string), From: 1, To: 200,
		ContentHash: first.Meta["content_hash"].(string), Step: 4}
	env.Req.PriorReads = []codeproto.PriorRead{prior}

	res := call(t, env, FileRead, `{"path":"a.txt","offset":10,"limit":50}`)
	if res.Text != "a.txt lines 10–59: unchanged since step 4; read that result." || res.Meta["repeat_of"] != 4 {
		t.Fatalf("%q %v", res.Text, res.Meta)
	}
	// Lines the earlier read did not return come back in full.
	if res := call(t, env, FileRead, `{"path":"a.txt","offset":150,"limit":100}`); res.Meta["repeat_of"] != nil ||
		!strings.HasPrefix(res.Text, "a.txt · lines 150–249 of 300") {
		t.Fatalf("%q", res.Text[:40])
	}
	// Through another name for the same file (a link): still a repeat.
	must(t, os.Symlink(filepath.Join(env.Home, "a.txt"), filepath.Join(env.Home, "link.txt")))
	if res := call(t, env, FileRead, `{"path":"link.txt","limit":5}`); res.Meta["repeat_of"] != 4 {
		t.Fatalf("%q", res.Text)
	}
	// An edit changes the hash: content again.
	call(t, env, FileEdit, `{"path":"a.txt","old_string":"line 1\n","new_string":"line one\n"}`)
	if res := call(t, env, FileRead, `{"path":"a.txt","limit":5}`); res.Meta["repeat_of"] != nil ||
		!strings.Contains(res.Text, "1\tline one") {
		t.Fatalf("%q", res.Text)
	}
}

func TestFileEditTable(t *testing.T) {
	env := testEnv(t)
	orig := "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	for _, tc := range []struct {
		name, args, want, content string
	}{
		{"once", `{"path":"f.go","old_string":"func a() {\n\treturn 1","new_string":"func a() {\n\treturn 2"}`,
			"edited f.go (+1 −1)", strings.Replace(orig, "return 1", "return 2", 1)},
		{"missing", `{"path":"f.go","old_string":"return 3","new_string":"x"}`,
			"ERROR: old_string: not found in f.go; nothing changed", orig},
		{"ambiguous", `{"path":"f.go","old_string":"return 1","new_string":"return 2"}`,
			"ERROR: old_string: occurs 2 times in f.go; nothing changed", orig},
		{"replace all", `{"path":"f.go","old_string":"return 1","new_string":"return 2","replace_all":true}`,
			"edited f.go (+2 −2)", strings.ReplaceAll(orig, "return 1", "return 2")},
		{"add lines", `{"path":"f.go","old_string":"func b() {\n","new_string":"// b is b.\nfunc b() {\n"}`,
			"edited f.go (+1 −0)", strings.Replace(orig, "func b", "// b is b.\nfunc b", 1)},
		{"remove lines", `{"path":"f.go","old_string":"\nfunc b() {\n\treturn 1\n}\n","new_string":""}`,
			"edited f.go (+0 −4)", "func a() {\n\treturn 1\n}\n"},
		{"empty old", `{"path":"f.go","old_string":"","new_string":"x"}`, "ERROR: old_string: is empty", orig},
		{"same", `{"path":"f.go","old_string":"a","new_string":"a"}`, "ERROR: new_string: is the same as old_string", orig},
		{"no new", `{"path":"f.go","old_string":"a"}`, "ERROR: new_string: is missing", orig},
		{"no file", `{"path":"nope.go","old_string":"a","new_string":"b"}`, "ERROR: path: nope.go does not exist", orig},
		{"crlf hint", `{"path":"f.go","old_string":"a\nb","new_string":"x"}`, "ERROR: old_string: not found in f.go; nothing changed (read the file again", orig},
		{"outside", `{"path":"../../etc/passwd","old_string":"a","new_string":"b"}`, "ERROR: path: ../../etc/passwd", orig},
	} {
		p := writeTestFile(t, env, "f.go", orig)
		res := call(t, env, FileEdit, tc.args)
		if !strings.HasPrefix(res.Text, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, res.Text, tc.want)
		}
		got, _ := os.ReadFile(p)
		if string(got) != tc.content {
			t.Errorf("%s: content %q, want %q", tc.name, got, tc.content)
		}
	}
}

// TestFileEditIsAtomicAndKeepsTheMode: the file is replaced by a rename (a
// reader holding the old file still reads it whole), its mode is kept, and
// no temporary file is left.
func TestFileEditIsAtomicAndKeepsTheMode(t *testing.T) {
	env := testEnv(t)
	p := writeTestFile(t, env, "run.sh", "#!/bin/sh\necho old\n")
	must(t, os.Chmod(p, 0o750))
	before, _ := os.Stat(p)
	reader, err := os.Open(p)
	must(t, err)
	defer func() { _ = reader.Close() }()

	res := call(t, env, FileEdit, `{"path":"run.sh","old_string":"echo old","new_string":"echo new"}`)
	if res.Text != "edited run.sh (+1 −1)" || res.Meta["lines_added"] != 1 || res.Meta["lines_removed"] != 1 ||
		res.Meta["path"] != "/home/agent/run.sh" {
		t.Fatalf("%q %v", res.Text, res.Meta)
	}
	after, _ := os.Stat(p)
	if after.Mode().Perm() != 0o750 {
		t.Fatalf("mode %v", after.Mode())
	}
	if before.Sys().(*syscall.Stat_t).Ino == after.Sys().(*syscall.Stat_t).Ino {
		t.Fatal("edited in place, not replaced")
	}
	old := make([]byte, 100)
	n, _ := reader.Read(old)
	if string(old[:n]) != "#!/bin/sh\necho old\n" {
		t.Fatalf("old reader saw %q", old[:n])
	}
	entries, _ := os.ReadDir(env.Home)
	for _, e := range entries {
		if strings.Contains(e.Name(), "guilds-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
	if out := call(t, env, Shell, shellArgs("./run.sh")); out.Text != "new" {
		t.Fatalf("%q", out.Text)
	}
}

func TestFileWrite(t *testing.T) {
	env := testEnv(t)
	res := call(t, env, FileWrite, `{"path":"repos/new/pkg/a.go","content":"package pkg\n\nvar X = 1\n"}`)
	if res.Text != "wrote repos/new/pkg/a.go (3 lines)" || res.Meta["lines_added"] != 3 || res.Meta["lines_removed"] != 0 ||
		res.Meta["path"] != "/home/agent/repos/new/pkg/a.go" {
		t.Fatalf("%q %v", res.Text, res.Meta)
	}
	p := filepath.Join(env.Home, "repos/new/pkg/a.go")
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
	must(t, os.Chmod(p, 0o600))
	res = call(t, env, FileWrite, `{"path":"repos/new/pkg/a.go","content":"package pkg\n\nvar X = 2\nvar Y = 3"}`)
	if res.Text != "wrote repos/new/pkg/a.go (4 lines)" || res.Meta["lines_added"] != 2 || res.Meta["lines_removed"] != 1 {
		t.Fatalf("%q %v", res.Text, res.Meta)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode not kept: %v", st.Mode())
	}
	// A link inside the home is written through and stays a link.
	must(t, os.Symlink(p, filepath.Join(env.Home, "alias.go")))
	call(t, env, FileWrite, `{"path":"alias.go","content":"package pkg\n"}`)
	if st, _ := os.Lstat(filepath.Join(env.Home, "alias.go")); st.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	if got, _ := os.ReadFile(p); string(got) != "package pkg\n" {
		t.Fatalf("%q", got)
	}
	if res := call(t, env, FileWrite, `{"path":"empty.txt","content":""}`); res.Text != "wrote empty.txt (0 lines)" {
		t.Fatalf("%q", res.Text)
	}
	if res := call(t, env, FileWrite, `{"path":"one.txt","content":"x"}`); res.Text != "wrote one.txt (1 line)" {
		t.Fatalf("%q", res.Text)
	}
}

// TestFileToolsConfinement: links pointing out of the home are refused by
// every file tool and change nothing there.
func TestFileToolsConfinement(t *testing.T) {
	env := testEnv(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	must(t, os.WriteFile(secret, []byte("outside\n"), 0o644))
	must(t, os.Symlink(secret, filepath.Join(env.Home, "secret-link")))
	must(t, os.Symlink(outside, filepath.Join(env.Home, "out-dir")))
	for _, tc := range []struct {
		f    func(t testing.TB, env *Env) string
		name string
	}{
		{func(t testing.TB, env *Env) string { return call(t, env, FileRead, `{"path":"secret-link"}`).Text }, "read link"},
		{func(t testing.TB, env *Env) string {
			return call(t, env, FileEdit, `{"path":"secret-link","old_string":"outside","new_string":"inside"}`).Text
		}, "edit link"},
		{func(t testing.TB, env *Env) string {
			return call(t, env, FileWrite, `{"path":"out-dir/new.txt","content":"x"}`).Text
		}, "write through a linked folder"},
		{func(t testing.TB, env *Env) string {
			return call(t, env, FileWrite, `{"path":"/home/agent/../../`+strings.TrimPrefix(outside, "/")+`/w.txt","content":"x"}`).Text
		}, "write with dot-dot"},
		{func(t testing.TB, env *Env) string {
			return call(t, env, CodeSearch2, `{"pattern":"outside","path":"out-dir"}`).Text
		}, "search"},
	} {
		got := tc.f(t, env)
		if !strings.HasPrefix(got, "ERROR: path: ") || !strings.Contains(got, "outside /home/agent") {
			t.Errorf("%s: %q", tc.name, got)
		}
	}
	if raw, _ := os.ReadFile(secret); string(raw) != "outside\n" {
		t.Fatal("the file outside changed")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("files were created outside: %v", entries)
	}
}

func TestFileEditSaysWhenLinesEndInCRLF(t *testing.T) {
	env := testEnv(t)
	writeTestFile(t, env, "w.txt", "one\r\ntwo\r\n")
	res := call(t, env, FileEdit, `{"path":"w.txt","old_string":"one\ntwo","new_string":"x"}`)
	if res.Text != `ERROR: old_string: not found in w.txt; nothing changed (the file's lines end in \r\n; old_string must too)` {
		t.Fatalf("%q", res.Text)
	}
	if res := call(t, env, FileEdit, `{"path":"w.txt","old_string":"one\r\ntwo","new_string":"1\r\n2"}`); res.Text != "edited w.txt (+2 −2)" {
		t.Fatalf("%q", res.Text)
	}
}

package codeops

import (
	"strings"
	"testing"
)

func TestCodeMatch(t *testing.T) {
	if astGrep() == "" {
		t.Fatal("ast-grep is not installed (npm install -g @ast-grep/cli): code_match cannot be tested")
	}
	env := searchRepo(t)
	writeTestFile(t, env, "repos/app/log.go", "package main\n\nimport \"fmt\"\n\nfunc log() {\n\tfmt.Println(\"a\", 1)\n\t// fmt.Println(\"x\")\n\t_ = \"fmt.Println(y)\"\n}\n")
	writeTestFile(t, env, "repos/app/tool.py", "def f(x):\n    print(x)  # print(y)\n    s = \"print(z)\"\n")
	for _, tc := range []struct{ args, want string }{
		{`{"pattern":"Open()","lang":"go"}`, "main.go:7: Open()\nmain.go:8: Open()\n2 matches in 1 file"},
		{`{"pattern":"fmt.Println($$$ARGS)","lang":"go"}`, "log.go:6: fmt.Println(\"a\", 1)\n1 match in 1 file"},
		{`{"pattern":"fmt.Println($$$ARGS)"}`, "log.go:6: fmt.Println(\"a\", 1)\n1 match in 1 file"},
		{`{"pattern":"print($A)"}`, "tool.py:2: print(x)  # print(y)\n1 match in 1 file"},
		{`{"pattern":"func Open() error { $$$ }","path":"store"}`, "store/store.go:3: func Open() error { return nil }\n1 match in 1 file"},
		{`{"pattern":"Open()","lang":"go","limit":1}`, "main.go:7: Open()\n2 matches in 1 file (showing the first 1; raise limit up to 100, or narrow with path)"},
		{`{"pattern":"Close()","lang":"go"}`, `no matches for "Close()" in /home/agent/repos/app`},
		{`{"pattern":"x","lang":"cobol"}`, `ERROR: lang: "cobol" is not a language syntax search knows`},
		{`{"pattern":"func (","lang":"go"}`, `ERROR: pattern: "func (" does not parse as go code`},
		{`{"pattern":"x","lang":"--help"}`, `ERROR: lang: "--help" is not a language name`},
		{`{"pattern":"x","limit":101}`, "ERROR: limit: 101 is out of range (1 to 100, default 30)"},
		{`{"pattern":""}`, "ERROR: pattern: is empty"},
		{`{"pattern":"x","path":"/etc"}`, "ERROR: path: /etc is outside /home/agent"},
	} {
		res := call(t, env, CodeMatch, tc.args)
		isPrefix := strings.HasPrefix(tc.want, "ERROR") && strings.HasPrefix(res.Text, tc.want)
		if res.Text != tc.want && !isPrefix {
			t.Errorf("%s:\n%s\nwant\n%s", tc.args, res.Text, tc.want)
		}
	}
	res := call(t, env, CodeMatch, `{"pattern":"Open()","lang":"go"}`)
	if res.Meta["matches"] != 2 || res.Meta["files"] != 1 {
		t.Fatalf("meta %v", res.Meta)
	}
}

func TestGoCallShape(t *testing.T) {
	for p, want := range map[string]bool{
		"fmt.Println($$$ARGS)": true, "Open()": true, "a.b.C($A, f($B))": true, "$F($$$)": true,
		"x := f()": false, "f(a) + g(b)": false, "func (": false, "(a)": false,
	} {
		if got := goCall(CodeMatchArgs{Pattern: p}); got != want {
			t.Errorf("goCall(%q) = %v", p, got)
		}
	}
	if goCall(CodeMatchArgs{Pattern: "f()", Lang: "python"}) {
		t.Error("python")
	}
}

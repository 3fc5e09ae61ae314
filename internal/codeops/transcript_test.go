package codeops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/codeproto"
)

// TestTranscriptGolden runs every operation in a small session, the way an
// agent would, and compares the results and metadata with
// testdata/transcript.golden.
func TestTranscriptGolden(t *testing.T) {
	env := testEnv(t)
	tools := map[string]func(context.Context, *Env, json.RawMessage) codeproto.Response{
		"shell": Shell, "shell_status": ShellStatus, "file_read": FileRead, "file_edit": FileEdit,
		"file_write": FileWrite, "code_search": CodeSearch2, "code_match": CodeMatch,
	}
	var out strings.Builder
	step := 0
	do := func(tool, args string) codeproto.Response {
		step++
		env.Req.Step, env.Req.CallID = step, fmt.Sprintf("c%d", step)
		res := tools[tool](context.Background(), env, json.RawMessage(args))
		meta, _ := json.Marshal(res.Meta)
		fmt.Fprintf(&out, "### %d %s %s\n%s\n--- meta %s\n\n", step, tool, args, res.Text, meta)
		if tool == "file_read" && res.Meta["repeat_of"] == nil && res.Meta["range"] != nil {
			r := res.Meta["range"].([]int)
			env.Req.PriorReads = append(env.Req.PriorReads, codeproto.PriorRead{Path: res.Meta["path"].(string),
				From: r[0], To: r[1], ContentHash: res.Meta["content_hash"].(string), Step: step})
		}
		return res
	}
	do("shell", `{"command":"mkdir -p repos/calc && cd repos/calc && git init -q && echo '*.out' > .gitignore"}`)
	do("file_write", `{"path":"calc.py","content":"def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"}`)
	do("file_write", `{"path":"test_calc.py","content":"from calc import add, sub\n\nassert add(1, 2) == 3\nassert sub(3, 1) == 2\nprint(\"ok\")\n"}`)
	do("file_read", `{"path":"calc.py"}`)
	do("file_read", `{"path":"calc.py","offset":4,"limit":2}`)
	do("file_edit", `{"path":"calc.py","old_string":"    return a - b\n","new_string":"    \"\"\"a minus b\"\"\"\n    return a - b\n"}`)
	do("file_read", `{"path":"calc.py","offset":5}`)
	do("file_edit", `{"path":"calc.py","old_string":"return","new_string":"return "}`)
	do("code_search", `{"pattern":"add|sub"}`)
	do("code_search", `{"pattern":"def ","mode":"content","context":1}`)
	do("code_match", `{"pattern":"assert $X == $Y","lang":"python"}`)
	do("shell", `{"command":"python3 test_calc.py && python3 -c 'import sys; sys.exit(5)'"}`)
	do("shell", `{"command":"printf 'building\\r\\033[32mdone\\033[0m\\n' > build.out; cat build.out"}`)
	do("code_search", `{"pattern":"done"}`)
	bg := do("shell", `{"command":"echo background says hi","background":true}`)
	id := bg.Meta["background_id"].(string)
	waitJob(t, env, id)
	do("shell_status", `{"id":"`+id+`"}`)
	do("shell_status", `{"id":"b7"}`)
	do("file_read", `{"path":"../../.runs/r1/c12.log"}`)
	golden(t, "transcript.golden", out.String())
}

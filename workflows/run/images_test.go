package run_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// An image an MCP tool returns is kept with the run and reaches the next
// model request as an image_url part of a user message after the tool
// message, which holds only its description. Neither the transcript nor the
// workflow history holds the image's base64.
func TestRunGivesAToolImageToTheModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{},
		turn{Calls: []call{{"notion_lookup", `{"query":"screenshot"}`}}},
		turn{Text: "I see the page"},
	)
	id := e.start("look at the page", 5)
	if _, err := e.wait(id, time.Minute); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(testImage)
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	msgs := reqs[1].Messages
	var toolAt = -1
	for i, m := range msgs {
		if m.Role == "tool" {
			toolAt = i
		}
	}
	if toolAt < 0 || toolAt+1 >= len(msgs) {
		t.Fatalf("no message after the tool result: %+v", msgs)
	}
	tool, next := msgs[toolAt], msgs[toolAt+1]
	if !strings.Contains(tool.Content, "the page as drawn:\n[image: image/png, 1.2 KiB; kept as run image 3.1]") {
		t.Fatalf("tool message = %q", tool.Content)
	}
	if next.Role != "user" || len(next.ImageURLs) != 1 || next.ImageURLs[0] != "data:image/png;base64,"+b64 ||
		!strings.Contains(next.Content, "run image 3.1") {
		t.Fatalf("image message = %+v", next)
	}
	probe := b64[20:80]
	if strings.Contains(tool.Content, probe) {
		t.Fatal("the tool message holds the image's base64")
	}
	if n := e.count(`SELECT count(*) FROM messages WHERE run_id = $1 AND strpos(content, $2) > 0`, id, probe) +
		e.count(`SELECT count(*) FROM tool_calls WHERE run_id = $1 AND strpos(result, $2) > 0`, id, probe); n != 0 {
		t.Fatalf("the transcript holds the image's base64 (%d rows)", n)
	}
	if n := e.count(`SELECT count(*) FROM run_images WHERE run_id = $1 AND seq = 3 AND idx = 1 AND data = $2`, id, testImage); n != 1 {
		t.Fatalf("run_images rows = %d", n)
	}
	if h := historyBytes(t, e, id); bytes.Contains(h, []byte(probe)) || bytes.Contains(h, testImage[8:40]) {
		t.Fatal("the workflow history holds the image")
	}
}

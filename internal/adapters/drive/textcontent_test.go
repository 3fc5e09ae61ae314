package drive_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/catalog"
)

// create_file's small text is textContent, as the spec names it: the
// published schema offers that name (and not the former text_content), a
// call with it creates the file, and a call still sending text_content is
// served the same way.
func TestCreateFileTakesTextContent(t *testing.T) {
	ms, err := catalog.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	for _, m := range ms {
		if m.Slug != "drive" {
			continue
		}
		for _, tool := range m.Tools {
			if tool.Name == "create_file" {
				if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if _, ok := schema.Properties["textContent"]; !ok {
		t.Fatal("create_file's schema lacks textContent")
	}
	if _, ok := schema.Properties["text_content"]; ok {
		t.Fatal("create_file's schema still offers text_content")
	}
	d, c := tree(t)
	ctx := context.Background()
	for name, args := range map[string]string{
		"spec.txt":   `{"name":"spec.txt","textContent":"hello"}`,
		"former.txt": `{"name":"former.txt","text_content":"hello"}`,
	} {
		if out, err := call(t, ctx, c, "create_file", args); err != nil || !strings.Contains(out, "\t"+name+"\ttext/plain\t") {
			t.Fatalf("create %s: %q %v", name, out, err)
		}
	}
	if w := strings.Join(d.Writes(), "; "); !strings.Contains(w, "create spec.txt -> proj") || !strings.Contains(w, "create former.txt -> proj") {
		t.Fatalf("writes: %s", w)
	}
}

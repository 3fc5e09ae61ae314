package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/browserproto"
	"github.com/guilds/guilds/sandbox/helper"
)

func TestRunAnswersABase64ResponseAndRefusesBadInvocations(t *testing.T) {
	req, err := helper.Encode(browserproto.Request{Tool: "browser_fly"})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{req}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	resp, err := helper.Decode[browserproto.Response](out.Bytes())
	if err != nil || !strings.Contains(resp.Text, `ERROR: tool: "browser_fly" is not a browser tool`) {
		t.Fatalf("response %+v, %v", resp, err)
	}
	for _, args := range [][]string{{}, {"a", "b"}, {"not base64 !"}, {"@/etc/passwd"}, {"@/run/guilds/requests/../x"}} {
		out.Reset()
		errOut.Reset()
		if code := run(context.Background(), args, &out, &errOut); code != 2 || out.Len() != 0 {
			t.Errorf("%q: exit %d, out %q", args, code, out.String())
		}
	}
}

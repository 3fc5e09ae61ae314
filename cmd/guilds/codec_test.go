package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/payloadcodec"
)

// With GUILDS_TEMPORAL_CODEC=encrypt the same run completes, its history on
// the Temporal server holds the model's text and the note only as ciphertext,
// and the dev UI is pointed at the API's codec endpoint, which opens it.
func TestDevRunsWithSealedPayloads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	d, runID := runAgentEndToEnd(t, map[string]string{"GUILDS_TEMPORAL_CODEC": "encrypt"})

	c, err := client.Dial(client.Options{HostPort: d.Temporal, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iter := c.GetWorkflowHistory(ctx, "run-"+runID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var sealed *commonpb.Payloads
	var events int
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		raw, _ := proto.Marshal(ev)
		for _, clear := range []string{"buy milk", "Remember to", "Noted."} {
			if bytes.Contains(raw, []byte(clear)) {
				t.Errorf("event %d (%s) holds %q in clear", ev.GetEventId(), ev.GetEventType(), clear)
			}
		}
		if sealed == nil {
			if in := ev.GetWorkflowExecutionStartedEventAttributes().GetInput(); in != nil {
				sealed = in
			}
		}
	}
	if events == 0 || sealed == nil {
		t.Fatalf("%d events, start input %v", events, sealed)
	}
	if enc := string(sealed.Payloads[0].Metadata[converter.MetadataEncoding]); enc != payloadcodec.Encoding {
		t.Fatalf("start input encoded as %q", enc)
	}

	// The UI's codec (no token on a loopback API) opens the start input (ids only).
	remote := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{Endpoint: d.API + api.CodecPath})
	open, err := remote.Decode(sealed.Payloads)
	if err != nil || !bytes.Contains(open[0].Data, []byte(`"run_id":"`+runID+`"`)) {
		t.Fatalf("decode through the API: %v %v", open, err)
	}
	resp, err := http.Get(d.UI + "/api/v1/settings")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var settings struct {
		Codec struct{ Endpoint string }
	}
	if err := json.Unmarshal(body, &settings); err != nil || settings.Codec.Endpoint != d.API+api.CodecPath {
		t.Errorf("UI codec settings: %s (%v)", body, err)
	}
}

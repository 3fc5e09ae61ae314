package payloadcodec_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/guilds/guilds/internal/payloadcodec"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testtemporal"
)

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

func keyring(t *testing.T, entries ...string) *secret.Keyring {
	t.Helper()
	kr, err := secret.ParseKeyring(strings.Join(entries, ","))
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func newKey(t *testing.T, kid string) string {
	t.Helper()
	k, err := secret.GenerateKey(kid)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRoundTripHidesEverything(t *testing.T) {
	t.Parallel()
	c := payloadcodec.New(keyring(t, newKey(t, "k1")), true)
	in, err := converter.GetDefaultDataConverter().ToPayloads("the demo is on Friday", map[string]int{"n": 3})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := c.Encode(in.Payloads)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range enc {
		if string(p.Metadata[converter.MetadataEncoding]) != payloadcodec.Encoding || string(p.Metadata[payloadcodec.MetadataKeyID]) != "k1" {
			t.Errorf("metadata %v", p.Metadata)
		}
		if bytes.Contains(p.Data, []byte("Friday")) || bytes.Contains(p.Data, []byte("json/plain")) {
			t.Errorf("plaintext in %q", p.Data)
		}
	}
	dec, err := c.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in.Payloads {
		if !proto.Equal(in.Payloads[i], dec[i]) {
			t.Errorf("payload %d: %v != %v", i, dec[i], in.Payloads[i])
		}
	}
}

// Payloads from before sealing was switched on are passed through; with
// sealing off, Encode leaves payloads alone and Decode still opens sealed
// ones, so switching it off never strands a running workflow.
func TestSealingCanBeSwitchedEitherWay(t *testing.T) {
	t.Parallel()
	kr := keyring(t, newKey(t, "k1"))
	plain := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte("json/plain")}, Data: []byte(`"hi"`)}
	dec, err := payloadcodec.New(kr, true).Decode([]*commonpb.Payload{plain})
	if err != nil || !proto.Equal(dec[0], plain) {
		t.Fatalf("plain through a sealing codec: %v %v", dec, err)
	}
	sealed, _ := payloadcodec.New(kr, true).Encode([]*commonpb.Payload{plain})
	off := payloadcodec.New(kr, false)
	if enc, _ := off.Encode([]*commonpb.Payload{plain}); !proto.Equal(enc[0], plain) {
		t.Errorf("sealing off still encoded: %v", enc[0])
	}
	if dec, err := off.Decode(sealed); err != nil || !proto.Equal(dec[0], plain) {
		t.Errorf("sealing off cannot open a sealed payload: %v %v", dec, err)
	}
}

// After a rotation the retired key still opens old payloads; once it is
// dropped from the keyring the error says what to do.
func TestRotationAndRetiredKeys(t *testing.T) {
	t.Parallel()
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	in := []*commonpb.Payload{{Data: []byte("old turn")}}
	old, err := payloadcodec.New(keyring(t, k1), true).Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	rotated := payloadcodec.New(keyring(t, k2, k1), true)
	if dec, err := rotated.Decode(old); err != nil || string(dec[0].Data) != "old turn" {
		t.Fatalf("after rotation: %v %v", dec, err)
	}
	if enc, _ := rotated.Encode(in); string(enc[0].Metadata[payloadcodec.MetadataKeyID]) != "k2" {
		t.Errorf("new payloads sealed with %q", enc[0].Metadata[payloadcodec.MetadataKeyID])
	}
	_, err = payloadcodec.New(keyring(t, k2), false).Decode(old)
	if !errors.Is(err, secret.ErrUnknownKey) || !strings.Contains(err.Error(), "GUILDS_ENCRYPTION_KEY") {
		t.Fatalf("retired key dropped: %v", err)
	}
}

// A credential ciphertext sealed with the same keyring cannot be passed off
// as a payload, and a tampered payload is refused.
func TestForeignAndTamperedCiphertexts(t *testing.T) {
	t.Parallel()
	kr := keyring(t, newKey(t, "k1"))
	cred, err := kr.Seal([]byte("refresh-token"), []byte("connection 1"))
	if err != nil {
		t.Fatal(err)
	}
	c := payloadcodec.New(kr, true)
	forged := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(payloadcodec.Encoding)}, Data: cred}
	if _, err := c.Decode([]*commonpb.Payload{forged}); !errors.Is(err, secret.ErrDecrypt) {
		t.Errorf("credential ciphertext decoded as a payload: %v", err)
	}
	enc, _ := c.Encode([]*commonpb.Payload{{Data: []byte("x")}})
	enc[0].Data[len(enc[0].Data)-1] ^= 1
	if _, err := c.Decode(enc); !errors.Is(err, secret.ErrDecrypt) {
		t.Errorf("tampered payload: %v", err)
	}
}

const marker = "zebra-note-4411"

func echoWorkflow(ctx workflow.Context, in string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	var out string
	if err := workflow.ExecuteActivity(ctx, echoActivity, in).Get(ctx, &out); err != nil {
		return "", err
	}
	if err := workflow.ExecuteActivity(ctx, failActivity, in).Get(ctx, nil); err == nil {
		return "", errors.New("failActivity did not fail")
	}
	return out, nil
}

func echoActivity(_ context.Context, in string) (string, error) { return "echo " + in, nil }

func failActivity(_ context.Context, in string) error {
	return temporal.NewApplicationError("could not handle "+in, "tool", nil)
}

// On the real dev server: a client and worker using the codec run a workflow
// whose input, activity results, memo and failure message all hold the
// marker; the raw history holds it nowhere, and the codec client reads the
// result back in clear.
func TestHistoryHoldsOnlyCiphertext(t *testing.T) {
	t.Parallel()
	dc, fc := payloadcodec.New(keyring(t, newKey(t, "k1")), true).Converters()
	c, err := client.Dial(client.Options{HostPort: testtemporal.Address(t), Namespace: "default",
		DataConverter: dc, FailureConverter: fc})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	queue := testtemporal.TaskQueue(t)
	w := sdkworker.New(c, queue, sdkworker.Options{})
	w.RegisterWorkflow(echoWorkflow)
	w.RegisterActivity(echoActivity)
	w.RegisterActivity(failActivity)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "codec-" + queue, TaskQueue: queue,
		Memo: map[string]any{"agent": marker}}, echoWorkflow, marker)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil || out != "echo "+marker {
		t.Fatalf("result %q %v", out, err)
	}

	plain := testtemporal.Client(t)
	iter := plain.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var encrypted int
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(marker)) {
			t.Errorf("event %d (%s) holds the marker in clear", ev.GetEventId(), ev.GetEventType())
		}
		encrypted += bytes.Count(raw, []byte(payloadcodec.Encoding))
	}
	if encrypted < 5 {
		t.Errorf("only %d encrypted payloads in the history", encrypted)
	}
}

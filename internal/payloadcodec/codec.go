// Package payloadcodec encrypts what crosses the Temporal boundary (workflow
// and activity inputs and results, memos, failure messages) with the
// platform's keyring, and decodes it again for the worker, the API's codec
// endpoint (which the Temporal UI and CLI call) and tests.
//
// Credentials never cross that boundary in the first place (ADR 0504); the
// codec is defence in depth for model text and stamped tool results. Sealing
// is switched on with GUILDS_TEMPORAL_CODEC=encrypt; opening is always on, so
// switching it off again never strands a running workflow (ADR 0510).
package payloadcodec

import (
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/guilds/guilds/internal/secret"
)

const (
	// Encoding marks an encrypted payload in its metadata.
	Encoding = "binary/encrypted"
	// MetadataKeyID names the key a payload was sealed with, for operators;
	// the ciphertext carries it too, and that is what Decode trusts.
	MetadataKeyID = "encryption-key-id"
)

// aad keeps payload ciphertexts apart from credential ciphertexts sealed with
// the same keyring: neither can be opened as the other.
var aad = []byte("guilds/temporal-payload/v1")

// Codec is a converter.PayloadCodec sealing each payload whole (metadata and
// data) under the keyring's active key.
type Codec struct {
	keys *secret.Keyring
	seal bool
}

// New returns a codec over keys that seals payloads when seal is set and
// opens sealed ones always. A payload sealed under any key of the ring can be
// opened, so rotating GUILDS_ENCRYPTION_KEY keeps old histories readable as
// long as the retired key stays listed.
func New(keys *secret.Keyring, seal bool) *Codec { return &Codec{keys: keys, seal: seal} }

// Seals reports whether Encode encrypts.
func (c *Codec) Seals() bool { return c.seal }

// Encode seals every payload, or returns them as they are when sealing is off.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if !c.seal {
		return payloads, nil
	}
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("payloadcodec: marshal: %w", err)
		}
		sealed, err := c.keys.Seal(plain, aad)
		if err != nil {
			return nil, fmt.Errorf("payloadcodec: seal: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(Encoding),
				MetadataKeyID:              []byte(c.keys.ActiveKeyID()),
			},
			Data: sealed,
		}
	}
	return out, nil
}

// Decode opens every encrypted payload and passes any other through, so
// histories written before the codec was switched on stay readable.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		plain, err := c.keys.Open(p.GetData(), aad)
		if err != nil {
			if errors.Is(err, secret.ErrUnknownKey) {
				return nil, fmt.Errorf("payloadcodec: %w: keep the retired key in GUILDS_ENCRYPTION_KEY while histories sealed with it are kept", err)
			}
			return nil, fmt.Errorf("payloadcodec: open: %w", err)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(plain, &orig); err != nil {
			return nil, fmt.Errorf("payloadcodec: unmarshal: %w", err)
		}
		out[i] = &orig
	}
	return out, nil
}

// Converters returns what every Temporal client of the platform (API, worker,
// CLI) sets in client.Options: the SDK's default data converter behind c and,
// when c seals, a failure converter that moves failure messages and stack
// traces into a sealed payload too (a tool or model error can quote what it
// was given). The history then shows "Encoded failure" until decoded.
func (c *Codec) Converters() (converter.DataConverter, converter.FailureConverter) {
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
	return dc, temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter:          dc,
		EncodeCommonAttributes: c.seal,
	})
}

package mcpoauth_test

import (
	"errors"
	"testing"

	"github.com/guilds/guilds/internal/mcpoauth"
)

// IPv6 forms that carry an IPv4 address are judged by that address, and the
// IPv6 ranges that are private by definition are private.
func TestPolicyDecidesOnTheEmbeddedIPv4(t *testing.T) {
	strict := mcpoauth.Policy{}
	private := mcpoauth.Policy{AllowLoopback: true, AllowPrivate: true}
	cases := []struct {
		p    mcpoauth.Policy
		host string
		okay bool
	}{
		// NAT64 well-known prefix: 64:ff9b::/96 + the IPv4 address.
		{strict, "64:ff9b::a9fe:a9fe", false}, // 169.254.169.254
		{private, "64:ff9b::a9fe:a9fe", false},
		{strict, "64:ff9b::7f00:1", false}, // 127.0.0.1
		{strict, "64:ff9b::a00:5", false},  // 10.0.0.5
		{private, "64:ff9b::a00:5", true},
		{strict, "64:ff9b::808:808", true}, // 8.8.8.8
		// The local-use NAT64 prefix is a private network's own.
		{strict, "64:ff9b:1::808:808", false},
		{strict, "64:ff9b:1:a9fe:a9:fe00::", false},
		// 6to4: 2002:AABB:CCDD::/48 embeds AA.BB.CC.DD.
		{strict, "2002:a9fe:a9fe::1", false},
		{private, "2002:a9fe:a9fe::1", false},
		{strict, "2002:7f00:1::", false},
		{strict, "2002:c0a8:101::1", false}, // 192.168.1.1
		{strict, "2002:808:808::1", true},
		// IPv4-compatible (deprecated) ::a.b.c.d.
		{strict, "::a9fe:a9fe", false},
		{strict, "::7f00:1", false},
		{strict, "::a00:5", false},
		// IPv4-mapped, both spellings.
		{strict, "::ffff:169.254.169.254", false},
		{strict, "::ffff:a9fe:a9fe", false},
		// Teredo: the client's address is the last 32 bits, inverted.
		{strict, "2001:0:4136:e378:8000:63bf:5601:5656", false}, // client 169.254.169.169 -> inverted a9fe:a9a9
		// Site-local (deprecated, still routed by some stacks).
		{strict, "fec0::1", false},
		{private, "fec0::1", true},
		// Azure's wire server and instance metadata relay.
		{strict, "168.63.129.16", false},
		{private, "168.63.129.16", false},
	}
	for _, c := range cases {
		host := c.host
		if !isIPv4(host) {
			host = "[" + host + "]"
		}
		_, err := c.p.Check("https://" + host + "/x")
		if (err == nil) != c.okay {
			t.Errorf("%+v Check(%s) = %v, want ok=%v", c.p, host, err, c.okay)
		}
		if err != nil && !errors.Is(err, mcpoauth.ErrBlockedEndpoint) {
			t.Errorf("error %v does not wrap ErrBlockedEndpoint", err)
		}
	}
}

func isIPv4(h string) bool {
	for _, r := range h {
		if r == ':' {
			return false
		}
	}
	return true
}

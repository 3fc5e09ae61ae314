package mcpoauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// AllowPrivateEnv lets an operator reach authorization servers on loopback
// and private networks (a self-hosted IdP on the LAN, local development).
const AllowPrivateEnv = "GUILDS_OAUTH_ALLOW_PRIVATE"

// Policy says which endpoints from remote metadata the platform may call.
// The zero value is the strict production policy: https only, public
// addresses only.
type Policy struct {
	// AllowLoopback accepts http and https on 127.0.0.0/8, ::1 and localhost.
	AllowLoopback bool
	// AllowPrivate accepts RFC 1918 / unique-local addresses (and loopback).
	AllowPrivate bool
}

// PolicyFromEnv reads AllowPrivateEnv ("1" or "true" allows loopback and
// private addresses).
func PolicyFromEnv(getenv func(string) string) Policy {
	switch strings.ToLower(getenv(AllowPrivateEnv)) {
	case "1", "true", "yes":
		return Policy{AllowLoopback: true, AllowPrivate: true}
	}
	return Policy{}
}

// ErrBlockedEndpoint is wrapped by every refusal of Check and of the client's dialer.
var ErrBlockedEndpoint = errors.New("endpoint refused")

// Check parses raw and refuses what the policy does not allow: non-absolute
// URLs, userinfo, schemes other than https (http only on allowed loopback),
// link-local and cloud metadata addresses always, loopback and private
// addresses unless allowed. Host names are checked again at dial time by
// Client, so a name resolving to a refused address fails there.
func (p Policy) Check(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !u.IsAbs() {
		return nil, fmt.Errorf("%w: %q is not an absolute URL", ErrBlockedEndpoint, raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: %q carries credentials", ErrBlockedEndpoint, u.Redacted())
	}
	host := strings.ToLower(u.Hostname())
	loop := isLoopbackName(host)
	switch u.Scheme {
	case "https":
	case "http":
		if !loop || !p.AllowLoopback {
			return nil, fmt.Errorf("%w: %q must use https", ErrBlockedEndpoint, raw)
		}
	default:
		return nil, fmt.Errorf("%w: %q must use https", ErrBlockedEndpoint, raw)
	}
	if host == "metadata.google.internal" || host == "metadata" {
		return nil, fmt.Errorf("%w: %q is a cloud metadata host", ErrBlockedEndpoint, raw)
	}
	if host == "localhost" && !p.AllowLoopback {
		return nil, fmt.Errorf("%w: %q is a loopback host", ErrBlockedEndpoint, raw)
	}
	if ip := net.ParseIP(host); ip != nil {
		if err := p.checkIP(ip); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrBlockedEndpoint, raw, err)
		}
	}
	return u, nil
}

func isLoopbackName(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

var metadataIPs = []net.IP{
	net.ParseIP("169.254.169.254"), net.ParseIP("fd00:ec2::254"), net.ParseIP("100.100.100.200"),
	net.ParseIP("168.63.129.16"), // Azure's wire server
}

func (p Policy) checkIP(ip net.IP) error {
	if ip.To4() == nil {
		if err := p.checkEmbedded(ip); err != nil {
			return err
		}
	}
	for _, m := range metadataIPs {
		if ip.Equal(m) {
			return errors.New("cloud metadata address")
		}
	}
	switch {
	case ip.IsUnspecified() || ip.IsMulticast():
		return errors.New("not a unicast address")
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return errors.New("link-local address")
	case ip.IsLoopback():
		if !p.AllowLoopback {
			return errors.New("loopback address")
		}
	case ip.IsPrivate() || isSharedOrReserved(ip):
		if !p.AllowPrivate {
			return errors.New("private address")
		}
	}
	return nil
}

// checkEmbedded judges the IPv6 forms that carry an IPv4 address by that
// address (a host behind NAT64, 6to4 or Teredo is reached at it), and
// refuses the IPv6 ranges that only exist inside a private network.
func (p Policy) checkEmbedded(ip net.IP) error {
	if siteLocal.Contains(ip) || nat64Local.Contains(ip) {
		if !p.AllowPrivate {
			return errors.New("private address")
		}
		return nil
	}
	for _, v4 := range embeddedIPv4(ip) {
		if err := p.checkIP(v4); err != nil {
			return fmt.Errorf("embeds %s: %w", v4, err)
		}
	}
	return nil
}

var (
	siteLocal    = mustCIDR("fec0::/10")
	nat64Local   = mustCIDR("64:ff9b:1::/48") // RFC 8215 local-use prefix
	nat64        = mustCIDR("64:ff9b::/96")   // RFC 6052 well-known prefix
	sixToFour    = mustCIDR("2002::/16")
	teredo       = mustCIDR("2001::/32")
	ipv4Compat   = mustCIDR("::/96")
	ipv6Reserved = []net.IP{net.IPv6unspecified, net.IPv6loopback}
)

func mustCIDR(c string) *net.IPNet {
	_, n, err := net.ParseCIDR(c)
	if err != nil {
		panic(err)
	}
	return n
}

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries: the last
// 32 bits of NAT64 and IPv4-compatible forms, bits 16–47 of 6to4, and
// Teredo's server (bits 32–63) and client (the last 32 bits, inverted).
func embeddedIPv4(ip net.IP) []net.IP {
	ip = ip.To16()
	v4 := func(b []byte) net.IP { return net.IPv4(b[0], b[1], b[2], b[3]) }
	switch {
	case nat64.Contains(ip):
		return []net.IP{v4(ip[12:16])}
	case sixToFour.Contains(ip):
		return []net.IP{v4(ip[2:6])}
	case teredo.Contains(ip):
		client := []byte{^ip[12], ^ip[13], ^ip[14], ^ip[15]}
		return []net.IP{v4(ip[4:8]), v4(client)}
	case ipv4Compat.Contains(ip):
		for _, r := range ipv6Reserved {
			if ip.Equal(r) {
				return nil
			}
		}
		return []net.IP{v4(ip[12:16])}
	}
	return nil
}

var reserved = func() []*net.IPNet {
	var out []*net.IPNet
	for _, c := range []string{"100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4", "0.0.0.0/8"} {
		_, n, _ := net.ParseCIDR(c)
		out = append(out, n)
	}
	return out
}()

func isSharedOrReserved(ip net.IP) bool {
	for _, n := range reserved {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// Client returns an HTTP client for metadata, registration and token calls:
// every dialled address is checked against the policy (so DNS cannot steer a
// checked name to a refused address), and so is every redirect.
func (p Policy) Client(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("%w: unresolved address %q", ErrBlockedEndpoint, host)
		}
		if err := p.checkIP(ip); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBlockedEndpoint, host, err)
		}
		return nil
	}}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Timeout: timeout, Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		_, err := p.Check(req.URL.String())
		return err
	}}
}

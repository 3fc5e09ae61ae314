package mcpconformance

import (
	"errors"
	"net/url"
	"sync"
)

// expectation is what a prepared login's callback must carry (RFC 9207).
type expectation struct {
	issuer   string
	required bool // the server's metadata advertised the iss parameter
}

// expected holds, by redirect URI, the issuer of the login Prepare set up
// last for it: the driver prepares then authorizes one login at a time
// through its one loopback listener, whose redirect URI keys it.
var expected sync.Map

func expectIssuer(redirectURI, issuer string, required bool) {
	expected.Store(redirectURI, expectation{issuer: issuer, required: required})
}

// checkIssuer applies RFC 9207 to a callback, as the platform's own
// callback does: an iss must equal the issuer the login was prepared with,
// compared as plain strings (no case folding, default ports or trailing
// slashes); a server that advertised iss must send it.
func checkIssuer(redirectURI string, q url.Values) error {
	v, ok := expected.Load(redirectURI)
	if !ok {
		return nil
	}
	e := v.(expectation)
	iss, sent := q["iss"]
	switch {
	case !sent && e.required:
		return errors.New("the authorization server advertises iss but the callback has none (RFC 9207): refused before redeeming the code")
	case sent && (len(iss) != 1 || iss[0] != e.issuer):
		return errors.New("the callback's iss is not the authorization server the login was started with (RFC 9207): refused before redeeming the code")
	}
	return nil
}

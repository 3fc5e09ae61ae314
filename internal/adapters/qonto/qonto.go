// Package qonto is the local adapter for Qonto's Business API v2: bank
// accounts, completed transactions that still lack an invoice, and single
// transactions, answered as compact TSV.
//
// Qonto authenticates a request with the organisation's login and secret key
// joined by a colon, sent as the whole Authorization header. Connect takes
// them as two fields (the catalog row's key_fields, login and secret_key),
// stored apart; a login stored before that holds the one string
// "login:secret_key" as its key, which is still read. Check refuses a login
// without both halves before asking the service.
//
// The login is the organisation's slug, and Qonto builds account and
// transaction slugs from it; the tables carry the UUIDs instead, so no answer
// repeats half of the credential.
package qonto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/guilds/guilds/internal/adapters"
)

// Name is the catalog's config.adapter for this service.
const Name = "qonto"

func init() { adapters.Register(&Adapter{}) }

// Adapter implements adapters.Adapter for Qonto.
type Adapter struct {
	// Now is the clock for look-back windows; nil means time.Now.
	Now func() time.Time
	// Wait and Poll bound upload_invoice's wait for Qonto's processing;
	// zero means DefaultWait and DefaultPoll.
	Wait, Poll time.Duration
	// Clock times that wait; nil means the wall clock.
	Clock WaitClock
}

// WaitClock is what upload_invoice's wait reads and sleeps on.
type WaitClock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

func (*Adapter) Name() string { return Name }

// Timeout is upload_invoice's bound on one call: the upload, then
// DefaultWait for Qonto's processing (adapters.ToolTimeouts). The other
// tools take the pool's default.
func (*Adapter) Timeout(tool string) time.Duration {
	if tool == "upload_invoice" {
		return UploadTimeout
	}
	return 0
}

// Fields of the two-field key (the catalog row's key_fields).
const (
	FieldLogin  = "login"
	FieldSecret = "secret_key"
)

// errKeyShape is the refusal of a login without both halves.
var errKeyShape = fmt.Errorf("%w: enter the organisation's login and secret key (Qonto, Settings → Integrations → API key) as login and secret_key; a single key is login:secret_key", adapters.ErrRejected)

// Check reads the organisation the login belongs to. Its legal name is the
// hint; the slug is not, since it is the login itself.
func (a *Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	h, err := authHeader(c)
	if err != nil {
		return "", err
	}
	var org organizationAnswer
	if err := adapters.Rejection(c.GetJSON(ctx, "/v2/organization", nil, h, &org)); err != nil {
		return "", err
	}
	if org.Organization == nil {
		return "", errors.New("the service's organization answer has no organization")
	}
	login, _ := loginParts(c)
	name := strings.TrimSpace(org.Organization.LegalName)
	if name == "" || strings.Contains(strings.ToLower(name), strings.ToLower(strings.TrimSpace(login))) {
		return "", nil
	}
	return name, nil
}

type toolFunc func(ctx context.Context, a *Adapter, c adapters.Conn, h http.Header, args json.RawMessage) (string, error)

var tools = map[string]toolFunc{
	"list_bank_accounts":    listBankAccounts,
	"list_missing_invoices": listMissingInvoices,
	"get_transaction":       getTransaction,
	"upload_invoice":        uploadInvoice,
}

// Call runs one of the manifest's tools.
func (a *Adapter) Call(ctx context.Context, c adapters.Conn, tool string, args json.RawMessage) (string, error) {
	run, err := adapters.ToolOf(Name, tools, tool)
	if err != nil {
		return "", err
	}
	h, err := authHeader(c)
	if err != nil {
		return "", errors.New("the stored Qonto login lacks its login or secret_key: connect the login again")
	}
	return run(ctx, a, c, h, args)
}

func (a *Adapter) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// authHeader is the Authorization header Qonto wants: "login:secret_key" as
// is. Both halves must be there, without blanks or control characters.
func authHeader(c adapters.Conn) (http.Header, error) {
	login, secret := loginParts(c)
	bad := func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == ':' }
	switch {
	case login == "" || strings.ContainsFunc(login, bad):
		return nil, fmt.Errorf("%w (the login is missing or malformed)", errKeyShape)
	case secret == "" || strings.ContainsFunc(secret, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return nil, fmt.Errorf("%w (the secret_key is missing or malformed)", errKeyShape)
	}
	return http.Header{"Authorization": {login + ":" + secret}}, nil
}

// loginParts are the stored login and secret key: the two fields, or the
// halves of a single "login:secret_key" key stored before them.
func loginParts(c adapters.Conn) (login, secret string) {
	if l, s := c.Cred.Extra[FieldLogin], c.Cred.Extra[FieldSecret]; l != "" || s != "" {
		return strings.TrimSpace(l), strings.TrimSpace(s)
	}
	login, secret, _ = strings.Cut(strings.TrimSpace(c.Cred.AccessToken), ":")
	return strings.TrimSpace(login), strings.TrimSpace(secret)
}

// decode reads a tool's arguments; none at all is an empty object.
func decode(tool string, args json.RawMessage, into any) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	if err := json.Unmarshal(args, into); err != nil {
		return fmt.Errorf("%s: bad arguments: %w", tool, err)
	}
	return nil
}

package qonto_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/qonto"
	"github.com/guilds/guilds/internal/adapters/qonto/qontotest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/sandbox"
)

// The fake's names, as the tests use them.
const (
	login     = qontotest.Login
	secretKey = qontotest.SecretKey
	goodKey   = qontotest.GoodKey
	mainID    = qontotest.MainID
	savingsID = qontotest.SavingsID
	mainIBAN  = qontotest.MainIBAN
)

var (
	clock = qontotest.Clock
	txID  = qontotest.TxID
)

type fixture struct {
	svc *qontotest.Service
	a   *qonto.Adapter
}

func newFixture(t testing.TB) fixture {
	return fixture{svc: qontotest.New(t), a: &qonto.Adapter{Now: func() time.Time { return clock }}}
}

func (f fixture) conn(key string) adapters.Conn {
	return adapters.Conn{BaseURL: f.svc.URL, Cred: connectors.Credential{AccessToken: key}}
}

// call runs a tool with the good key and fails the test if any part of the
// credential shows in its answer.
func (f fixture) call(t *testing.T, tool, args string) (string, error) {
	t.Helper()
	out, err := f.a.Call(context.Background(), f.conn(goodKey), tool, json.RawMessage(args))
	noKey(t, out, err)
	return out, err
}

// noKey checks the whole key and each half: the login is the organisation's
// slug, which Qonto repeats inside its own slugs.
func noKey(t *testing.T, out string, err error, extra ...string) {
	t.Helper()
	for _, s := range append([]string{goodKey, login, secretKey}, extra...) {
		if strings.Contains(out, s) || (err != nil && strings.Contains(err.Error(), s)) {
			t.Fatalf("%q leaked: %q %v", s, out, err)
		}
	}
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestRegistered(t *testing.T) {
	a, ok := adapters.Lookup("qonto")
	if !ok || a.Name() != "qonto" {
		t.Fatalf("not registered: %v", adapters.Registered())
	}
}

func TestCheck(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	n := f.svc.Count()
	hint, err := f.a.Check(ctx, f.conn(" "+goodKey+"\n"))
	if err != nil || hint != "Acme SAS" {
		t.Fatalf("good key: %q %v", hint, err)
	}
	reqs := f.svc.Since(n)
	if len(reqs) != 1 || reqs[0].URL.Path != "/v2/organization" || reqs[0].Header.Get("Authorization") != goodKey {
		t.Fatalf("sent %d requests, first %s with Authorization %q", len(reqs), reqs[0].URL.Path, reqs[0].Header.Get("Authorization"))
	}

	// Refused by the service.
	for _, key := range []string{login + ":wrong-secret", "other-org-1:" + secretKey} {
		hint, err := f.a.Check(ctx, f.conn(key))
		if !errors.Is(err, adapters.ErrRejected) || hint != "" {
			t.Errorf("%s: %q %v", key, hint, err)
		}
		noKey(t, hint, err, "wrong-secret")
	}

	// Refused before asking: not login:secret_key.
	n = f.svc.Count()
	for name, key := range map[string]string{
		"no colon":         secretKey,
		"no login":         ":" + secretKey,
		"no secret":        login + ":",
		"empty":            "  ",
		"bearer word":      "Bearer " + goodKey,
		"header injection": login + ":" + secretKey + "\r\nX-Evil: 1",
	} {
		hint, err := f.a.Check(ctx, f.conn(key))
		if !errors.Is(err, adapters.ErrRejected) || hint != "" || !strings.Contains(err.Error(), "login:secret_key") {
			t.Errorf("%s: %q %v", name, hint, err)
		}
		noKey(t, hint, err)
	}
	if f.svc.Count() != n {
		t.Fatal("a malformed key was sent to the service")
	}

	down := qontotest.New(t)
	down.Close()
	_, err = f.a.Check(ctx, adapters.Conn{BaseURL: down.URL, Cred: connectors.Credential{AccessToken: goodKey}})
	if err == nil || errors.Is(err, adapters.ErrRejected) {
		t.Fatalf("service down: %v", err)
	}
	noKey(t, "", err)
}

func TestListBankAccounts(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, "list_bank_accounts", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "id\tname\tiban\tcurrency\tbalance\tauthorized_balance\tstatus\tmain\n" +
		mainID + "\tMain account\t" + mainIBAN + "\tEUR\t1234.56\t1200.00\tactive\ttrue\n" +
		savingsID + "\tSavings\tFR7616798000010000005669999\tEUR\t50.00\t50.00\tactive\tfalse\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestListMissingInvoices(t *testing.T) {
	f := newFixture(t)
	n := f.svc.Count()
	out, err := f.call(t, "list_missing_invoices", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	rows := lines(out)
	if len(rows) != 16 {
		t.Fatalf("default rows: %d\n%s", len(rows)-1, out)
	}
	if rows[0] != "id\tsettled\taccount\tcounterparty\tamount\tcurrency\tside\ttype\tcategory" {
		t.Fatalf("header: %q", rows[0])
	}
	// Both accounts merged, newest first; the label stands in for a missing clean name.
	if rows[1] != txID(2, 0)+"\t2026-09-28 12:00\tSavings\tADOBE *CREATIVE\t42.50\tEUR\tdebit\tcard\tsoftware" ||
		rows[2] != txID(1, 0)+"\t2026-09-28 11:00\tMain account\tVendor 0\t10.00\tEUR\tdebit\tcard\tsoftware" ||
		rows[3] != txID(2, 1)+"\t2026-09-27 06:00\tSavings\tVendor 1\t42.51\tEUR\tdebit\tcard\tsoftware" {
		t.Fatalf("rows:\n%s", out)
	}
	// Only every tenth main-account debit qualifies; pending ones are numbered from 500.
	for _, r := range rows[1:] {
		var i int
		cells := strings.Split(r, "\t")
		if cells[2] != "Main account" {
			continue
		}
		if _, err := fmt.Sscanf(cells[3], "Vendor %d", &i); err != nil || i%10 != 0 || i >= 500 {
			t.Fatalf("listed a transaction that has a proof, lost it, needs none or is pending: %s", r)
		}
	}

	reqs := f.svc.Since(n)
	if reqs[0].URL.Path != "/v2/organization" {
		t.Fatalf("first request %s", reqs[0].URL.Path)
	}
	q := reqs[1].URL.Query()
	if q.Get("bank_account_id") != mainID || q.Get("status[]") != "completed" || q.Get("side") != "debit" ||
		q.Get("settled_at_from") != "2026-06-30T13:00:00Z" || q.Get("sort_by") != "settled_at:desc" || q.Get("per_page") != "100" {
		t.Fatalf("transactions query: %v", q)
	}
	// The main account's 130 debits take two pages.
	if len(reqs) != 4 || reqs[2].URL.Query().Get("current_page") != "2" || reqs[3].URL.Query().Get("bank_account_id") != savingsID {
		t.Fatalf("%d requests", len(reqs))
	}

	out, err = f.call(t, "list_missing_invoices", `{"limit":30}`)
	if err != nil || len(lines(out)) != 17 {
		t.Fatalf("limit 30 (16 exist): %d %v", len(lines(out))-1, err)
	}
	out, err = f.call(t, "list_missing_invoices", `{"limit":2}`)
	if err != nil || len(lines(out)) != 3 {
		t.Fatalf("limit 2: %q %v", out, err)
	}
	out, err = f.call(t, "list_missing_invoices", `{"days":10}`)
	if err != nil || len(lines(out)) != 6 {
		t.Fatalf("10 days: %q %v", out, err)
	}
	out, err = f.call(t, "list_missing_invoices", `{"side":"Credit"}`)
	if err != nil || len(lines(out)) != 4 || !strings.Contains(out, "\t900.00\tEUR\tcredit\t") || strings.Contains(out, "\tdebit\t") {
		t.Fatalf("credit: %q %v", out, err)
	}

	for args, want := range map[string]string{
		`{"side":"both"}`:   "side must be debit or credit",
		`{"days":-3}`:       "days must be between 1 and 366",
		`{"days":400}`:      "days must be between 1 and 366",
		`{"days":"ninety"}`: "bad arguments",
	} {
		if _, err := f.call(t, "list_missing_invoices", args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", args, err)
		}
	}
}

func TestGetTransaction(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, "get_transaction", `{"id":"`+txID(1, 0)+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	rows := lines(out)
	if len(rows) != 2 || rows[0] != "id\tstatus\tside\tsettled\temitted\tcounterparty\tamount\tcurrency\tlocal_amount\tlocal_currency\t"+
		"type\tcategory\tvat_amount\tvat_rate\tcard\treference\tattachments\tattachment_required\tattachment_lost\tnote" {
		t.Fatalf("header: %q", out)
	}
	if rows[1] != txID(1, 0)+"\tcompleted\tdebit\t2026-09-28 11:00\t2026-09-26 11:00\tVendor 0\t10.00\tEUR\t10.00\tEUR\t"+
		"card\tsoftware\t\t\t1234\t\t0\ttrue\tfalse\tpaid by Jane" {
		t.Fatalf("row: %q", rows[1])
	}
	if strings.Contains(out, "https://") {
		t.Fatalf("attachment or logo URLs in the answer: %q", out)
	}

	_, err = f.call(t, "get_transaction", `{"id":"0190f2a1-0000-4000-8000-000000000000"}`)
	if err == nil || !strings.Contains(err.Error(), "no transaction") || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown id: %v", err)
	}
	_, err = f.call(t, "get_transaction", `{"id":"ratelimited"}`)
	var he *adapters.HTTPError
	if !errors.As(err, &he) || he.Status != 429 || !strings.Contains(err.Error(), "Rate limit exceeded") {
		t.Fatalf("429: %v", err)
	}
	for _, id := range []string{"", "  ", "../organization", "a b"} {
		if _, err := f.call(t, "get_transaction", `{"id":"`+id+`"}`); err == nil {
			t.Errorf("id %q accepted", id)
		}
	}
}

func TestUploadInvoiceNeedsTheWorkspace(t *testing.T) {
	f := newFixture(t)
	n := f.svc.Count()
	out, err := f.call(t, "upload_invoice", `{"transaction_id":"`+txID(1, 0)+`","path":"/home/agent/invoices/adobe.pdf"}`)
	if !errors.Is(err, sandbox.ErrNoWorkspace) || out != "" || !strings.Contains(err.Error(), "agent workspace") ||
		!strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("upload: %q %v", out, err)
	}
	if _, err := f.call(t, "upload_invoice", `{"transaction_id":"`+txID(1, 0)+`"}`); err == nil || !strings.Contains(err.Error(), "path: is required") {
		t.Fatalf("no path: %v", err)
	}
	if _, err := f.call(t, "upload_invoice", `{"transaction_id":"`+txID(1, 0)+`","path":"/etc/passwd"}`); err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Fatalf("outside path: %v", err)
	}
	if f.svc.Count() != n {
		t.Fatal("upload_invoice reached the service")
	}
}

func TestCallErrors(t *testing.T) {
	f := newFixture(t)
	if _, err := f.call(t, "delete_account", `{}`); err == nil || !strings.Contains(err.Error(), `"delete_account"`) {
		t.Fatalf("unknown tool: %v", err)
	}
	out, err := f.a.Call(context.Background(), f.conn(secretKey), "list_bank_accounts", nil)
	if err == nil || !strings.Contains(err.Error(), "connect the login again") {
		t.Fatalf("stored key without login: %v", err)
	}
	noKey(t, out, err)
	out, err = f.a.Call(context.Background(), f.conn(login+":revoked"), "list_bank_accounts", nil)
	var he *adapters.HTTPError
	if !errors.As(err, &he) || !he.Refused() {
		t.Fatalf("revoked key: %v", err)
	}
	noKey(t, out, err, "revoked")
}

// The two fields of Connect are sent joined, as the single key was; either
// one missing or malformed is refused before asking, naming it.
func TestCheckTwoFields(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	conn := func(l, s string) adapters.Conn {
		return adapters.Conn{BaseURL: f.svc.URL, Cred: connectors.Credential{Extra: map[string]string{"login": l, "secret_key": s}}}
	}
	n := f.svc.Count()
	hint, err := f.a.Check(ctx, conn(login, secretKey))
	if reqs := f.svc.Since(n); err != nil || hint != "Acme SAS" || reqs[0].Header.Get("Authorization") != goodKey {
		t.Fatalf("two fields: %q %v", hint, err)
	}
	n = f.svc.Count()
	for want, c := range map[string]adapters.Conn{
		"the login":      conn("", secretKey),
		"the secret_key": conn(login, ""),
		"login is":       conn("acme:"+login, secretKey),
	} {
		if _, err := f.a.Check(ctx, c); !errors.Is(err, adapters.ErrRejected) || !strings.Contains(err.Error(), strings.Fields(want)[0]) {
			t.Errorf("%s: %v", want, err)
		}
	}
	if f.svc.Count() != n {
		t.Fatal("a malformed login was sent")
	}
}

// Package qontotest is a local Qonto Business API v2 for tests of the Qonto
// adapter (internal/adapters/qonto) and of what is built on it.
package qontotest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The fake's organisation: its key's two fields, the header they make, its
// two accounts.
const (
	Login     = "acme-sas-4821"
	SecretKey = "9f1c2b7e5a0d4c3b8e6f" //nolint:gosec // G101: the fake's own test key
	GoodKey   = Login + ":" + SecretKey
	MainID    = "0190f2a1-7c3e-7a11-9d2b-4c5e6f708192"
	SavingsID = "0190f2a1-7c3e-7a11-9d2b-4c5e6f70ffff"
	MainIBAN  = "FR7616798000010000005663951"
)

// Clock is the fake's now: its transactions are settled before it.
var Clock = time.Date(2026, 9, 28, 13, 0, 0, 0, time.UTC)

// Service is a fake Qonto Business API: the Authorization header must be
// exactly Login:secret_key, errors come in the service's {"errors":[…]}
// shape, and slugs are built from the Login as Qonto builds them.
//
// The main account holds 130 completed debits, one every 12 hours; every
// tenth still needs an invoice, the others have one, lost it, or need none,
// plus pending ones the status filter must drop. The savings account holds
// three debits and three credits that need one.
type Service struct {
	*httptest.Server
	txs []map[string]any
	// attachments: processed attachments by transaction; pending: uploads
	// still processing, each shown after a number of attachment lists;
	// never: transactions whose uploads never finish processing; slow:
	// transactions whose uploads show after that many lists.
	attachments map[string][]map[string]any
	pending     map[string][]pendingUpload
	keys        map[string]bool
	never       map[string]bool
	slow        map[string]int
	uploads     []Upload

	mu       sync.Mutex
	requests []*http.Request
}

// New serves the fake until the test ends.
func New(t testing.TB) *Service {
	s := &Service{txs: fixtureTransactions(), attachments: map[string][]map[string]any{}, pending: map[string][]pendingUpload{},
		keys: map[string]bool{}, never: map[string]bool{}, slow: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Count is how many requests the fake received.
func (s *Service) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Since returns the requests received after the first n.
func (s *Service) Since(n int) []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests[n:]...)
}

func raw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	raw(w, http.StatusOK, string(b))
}

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Clone(r.Context()))
	s.mu.Unlock()

	if r.Header.Get("Authorization") != GoodKey {
		raw(w, http.StatusUnauthorized, `{"errors":[{"code":"unauthorized","detail":"Invalid credentials"}]}`)
		return
	}
	switch {
	case r.URL.Path == "/v2/organization":
		raw(w, http.StatusOK, organizationJSON)
	case r.URL.Path == "/v2/transactions":
		s.list(w, r)
	case strings.HasPrefix(r.URL.Path, "/v2/transactions/") && strings.HasSuffix(r.URL.Path, "/attachments"):
		s.attach(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v2/transactions/"), "/attachments"))
	case strings.HasPrefix(r.URL.Path, "/v2/transactions/"):
		id := strings.TrimPrefix(r.URL.Path, "/v2/transactions/")
		if id == "ratelimited" {
			raw(w, http.StatusTooManyRequests, `{"errors":[{"code":"too_many_requests","detail":"Rate limit exceeded"}]}`)
			return
		}
		for _, tx := range s.txs {
			if tx["id"] == id {
				one := map[string]any{}
				for k, v := range tx {
					one[k] = v
				}
				one["attachments"] = []map[string]any{{"id": "ea54f563-eaee-4dcb-b08e-688dc9937d23", "file_name": "invoice.pdf",
					"url": "https://bucket.example/attachment?X-Amz-Signature=abc", "probative_attachment": map[string]any{"status": "unavailable"}}}
				writeJSON(w, map[string]any{"transaction": one})
				return
			}
		}
		raw(w, http.StatusNotFound, `{"errors":[{"code":"not_found","detail":"Transaction not found"}]}`)
	default:
		raw(w, http.StatusNotFound, `{"errors":[{"code":"not_found","detail":"Route not found"}]}`)
	}
}

// list filters by account, status[], side and settled_at_from, sorts by
// settled_at descending and pages by per_page/current_page. It ignores
// with_attachments, so the adapter's own filter is what is tested.
func (s *Service) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account := q.Get("bank_account_id")
	if account == "" && q.Get("iban") == MainIBAN {
		account = MainID
	}
	if account == "" {
		raw(w, http.StatusUnprocessableEntity, `{"errors":[{"code":"invalid","detail":"bank_account_id or iban is required","source":{"parameter":"bank_account_id"}}]}`)
		return
	}
	from, err := time.Parse(time.RFC3339, q.Get("settled_at_from"))
	if q.Has("settled_at_from") && err != nil {
		raw(w, http.StatusUnprocessableEntity, `{"errors":[{"code":"invalid","detail":"settled_at_from is invalid"}]}`)
		return
	}
	var out []map[string]any
	for _, tx := range s.txs {
		settled, _ := time.Parse(time.RFC3339Nano, tx["settled_at"].(string))
		if tx["bank_account_id"] != account ||
			(q.Has("status[]") && !contains(q["status[]"], tx["status"].(string))) ||
			(q.Get("side") != "" && tx["side"] != q.Get("side")) ||
			(q.Has("settled_at_from") && settled.Before(from)) {
			continue
		}
		out = append(out, tx)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i]["settled_at"].(string) > out[j]["settled_at"].(string) })
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 || per > 100 {
		per = 100
	}
	page, _ := strconv.Atoi(q.Get("current_page"))
	if page <= 0 {
		page = 1
	}
	pages := max(1, (len(out)+per-1)/per)
	lo, hi := min(len(out), (page-1)*per), min(len(out), page*per)
	var next any
	if page < pages {
		next = page + 1
	}
	writeJSON(w, map[string]any{"transactions": out[lo:hi], "meta": map[string]any{
		"current_page": page, "next_page": next, "prev_page": nil, "total_pages": pages, "total_count": len(out), "per_page": per}})
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

const organizationJSON = `{"organization":{"id":"cb47875a-9b12-416e-aa9a-265b9dfaeee7","slug":"` + Login + `","legal_name":"Acme SAS",
"legal_number":"12A34FC5","legal_sector":"6200Z","legal_address":"1 rue de la Paix 75002 Paris FRANCE","legal_form":"SAS","legal_country":"FR",
"locale":"fr","contract_signed_at":"2022-12-01 08:57:00.123047","bank_accounts":[
{"id":"` + MainID + `","slug":"` + Login + `-bank-account-1","iban":"` + MainIBAN + `","bic":"QNTOFRP1XXX","currency":"EUR",
"balance":1234.56,"balance_cents":123456,"authorized_balance":1200,"authorized_balance_cents":120000,"name":"Main account",
"updated_at":"2026-09-28T12:00:46.967Z","status":"active","main":true},
{"id":"` + SavingsID + `","slug":"` + Login + `-bank-account-2","iban":"FR7616798000010000005669999","bic":"QNTOFRP1XXX","currency":"EUR",
"balance":"50,00","balance_cents":5000,"authorized_balance":"50,00","authorized_balance_cents":5000,"name":"Savings",
"updated_at":"2026-09-28T12:00:46.967Z","status":"active","main":false}]}}`

// TxID is the id of account n's i-th transaction.
func TxID(account, i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", account, i) }

func tx(account string, n, i int, settled time.Time, side, status string, cents int, attachments []string, required, lost bool) map[string]any {
	return map[string]any{
		"id": TxID(n, i), "transaction_id": fmt.Sprintf("%s-transaction-%d", Login, n*1000+i), "bank_account_id": account,
		"amount": float64(cents) / 100, "amount_cents": cents, "local_amount": float64(cents) / 100, "local_amount_cents": cents,
		"settled_balance": 111.1, "settled_balance_cents": 11110, "attachment_ids": attachments,
		"logo": map[string]any{"small": "https://logo.example/s.png", "medium": "https://logo.example/m.png"},
		"side": side, "operation_type": "card", "currency": "EUR", "local_currency": "EUR",
		"label": fmt.Sprintf("VENDOR %d", i), "clean_counterparty_name": fmt.Sprintf("Vendor %d", i),
		"settled_at": settled.Format("2006-01-02T15:04:05.000Z"), "emitted_at": settled.Add(-48 * time.Hour).Format("2006-01-02T15:04:05.000Z"),
		"updated_at": settled.Format("2006-01-02T15:04:05.000Z"), "status": status, "note": "paid\tby\nJane", "reference": nil,
		"vat_amount": nil, "vat_amount_cents": nil, "vat_rate": nil, "initiator_id": "ccdcef78-1aa1-4d44-b991-b10005a4ad1a",
		"label_ids": []string{}, "attachment_lost": lost, "attachment_required": required, "card_last_digits": "1234",
		"category": "software", "cashflow_category": map[string]any{"name": "Others"}, "subject_type": "card",
	}
}

func fixtureTransactions() []map[string]any {
	var out []map[string]any
	for i := range 130 {
		settled := Clock.Add(-time.Duration(i)*12*time.Hour - 2*time.Hour)
		attach, required, lost := []string{"ea54f563-eaee-4dcb-b08e-688dc9937d23"}, true, false
		switch i % 10 {
		case 0:
			attach = []string{}
		case 2:
			attach, lost = []string{}, true
		case 3:
			attach, required = []string{}, false
		}
		out = append(out, tx(MainID, 1, i, settled, "debit", "completed", 1000+i*7, attach, required, lost))
	}
	for i := range 5 {
		out = append(out, tx(MainID, 1, 500+i, Clock.Add(-time.Duration(i)*time.Hour), "debit", "pending", 999, []string{}, true, false))
	}
	for i := range 3 {
		settled := Clock.Add(-time.Duration(1+i*30) * time.Hour)
		d := tx(SavingsID, 2, i, settled, "debit", "completed", 4250+i, []string{}, true, false)
		if i == 0 {
			d["clean_counterparty_name"] = ""
			d["label"] = "ADOBE *CREATIVE"
		}
		out = append(out, d, tx(SavingsID, 2, 100+i, settled, "credit", "completed", 90000+i, []string{}, true, false))
	}
	return out
}

// Uploads returns the attachment uploads the fake accepted, in order.
func (s *Service) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Upload(nil), s.uploads...)
}

// Attached is how many attachments a transaction has, processed or not.
func (s *Service) Attached(tx string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.attachments[tx]) + len(s.pending[tx])
}

// Slow makes the uploads to tx show after lists attachment lists.
func (s *Service) Slow(tx string, lists int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow[tx] = lists
}

// Never makes the uploads to tx never finish processing.
func (s *Service) Never(tx string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.never[tx] = true
}

package qonto

import (
	"strconv"
	"strings"
	"time"
)

// The service's JSON, only the fields the tables use. Amounts are read in
// cents: the decimal twins have been sent both as numbers and as strings.

type organizationAnswer struct {
	Organization *struct {
		LegalName    string        `json:"legal_name"`
		BankAccounts []bankAccount `json:"bank_accounts"`
	} `json:"organization"`
}

type bankAccount struct {
	ID                     string `json:"id"`
	Name                   string `json:"name"`
	IBAN                   string `json:"iban"`
	Currency               string `json:"currency"`
	BalanceCents           *int64 `json:"balance_cents"`
	AuthorizedBalanceCents *int64 `json:"authorized_balance_cents"`
	Status                 string `json:"status"`
	Main                   bool   `json:"main"`
}

type transactionsAnswer struct {
	Transactions []transaction `json:"transactions"`
	Meta         struct {
		NextPage *int `json:"next_page"`
	} `json:"meta"`
}

type transactionAnswer struct {
	Transaction *transaction `json:"transaction"`
}

type transaction struct {
	ID                 string   `json:"id"`
	BankAccountID      string   `json:"bank_account_id"`
	Label              string   `json:"label"`
	CounterpartyName   string   `json:"clean_counterparty_name"`
	AmountCents        *int64   `json:"amount_cents"`
	Currency           string   `json:"currency"`
	LocalAmountCents   *int64   `json:"local_amount_cents"`
	LocalCurrency      string   `json:"local_currency"`
	Side               string   `json:"side"`
	OperationType      string   `json:"operation_type"`
	Status             string   `json:"status"`
	SettledAt          string   `json:"settled_at"`
	EmittedAt          string   `json:"emitted_at"`
	Note               string   `json:"note"`
	Reference          string   `json:"reference"`
	Category           string   `json:"category"`
	VATAmountCents     *int64   `json:"vat_amount_cents"`
	VATRate            *float64 `json:"vat_rate"`
	CardLastDigits     string   `json:"card_last_digits"`
	AttachmentIDs      []string `json:"attachment_ids"`
	AttachmentRequired bool     `json:"attachment_required"`
	AttachmentLost     bool     `json:"attachment_lost"`
}

// missingInvoice: the transaction is completed, needs a proof and has none,
// and nobody declared the proof lost.
func (t transaction) missingInvoice() bool {
	return t.Status == "completed" && len(t.AttachmentIDs) == 0 && t.AttachmentRequired && !t.AttachmentLost
}

// counterparty is the cleaned name when the service has one.
func (t transaction) counterparty() string {
	if s := strings.TrimSpace(t.CounterpartyName); s != "" {
		return s
	}
	return t.Label
}

// money renders cents as a decimal amount ("-12.05"); nil stays empty.
func money(cents *int64) string {
	if cents == nil {
		return ""
	}
	c := *cents
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	frac := strconv.FormatInt(c%100, 10)
	if len(frac) == 1 {
		frac = "0" + frac
	}
	return sign + strconv.FormatInt(c/100, 10) + "." + frac
}

// minute trims a service timestamp to the minute, in UTC; what it cannot
// read is passed through.
func minute(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04")
}

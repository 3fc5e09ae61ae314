package qonto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/guilds/guilds/internal/adapters"
)

const (
	defaultDays = 90
	maxDays     = 366
	// perPage is the service's largest page; maxPages bounds the pages read
	// per account, so a busy account cannot make one call page for minutes.
	perPage   = 100
	maxPages  = 10
	noteRunes = 280
)

func listBankAccounts(ctx context.Context, _ *Adapter, c adapters.Conn, h http.Header, _ json.RawMessage) (string, error) {
	accounts, err := bankAccounts(ctx, c, h)
	if err != nil {
		return "", err
	}
	t := adapters.NewTable("id", "name", "iban", "currency", "balance", "authorized_balance", "status", "main")
	for _, b := range accounts[:min(len(accounts), adapters.MaxRows)] {
		t.Add(b.ID, b.Name, b.IBAN, b.Currency, money(b.BalanceCents), money(b.AuthorizedBalanceCents), b.Status, b.Main)
	}
	return t.String(), nil
}

func bankAccounts(ctx context.Context, c adapters.Conn, h http.Header) ([]bankAccount, error) {
	var org organizationAnswer
	if err := c.GetJSON(ctx, "/v2/organization", nil, h, &org); err != nil {
		return nil, err
	}
	if org.Organization == nil {
		return nil, errors.New("the service's organization answer has no organization")
	}
	return org.Organization.BankAccounts, nil
}

type missingArgs struct {
	Days  int    `json:"days"`
	Side  string `json:"side"`
	Limit int    `json:"limit"`
}

// listMissingInvoices walks every bank account's completed transactions of
// the window, newest first, and keeps those still waiting for a proof.
func listMissingInvoices(ctx context.Context, a *Adapter, c adapters.Conn, h http.Header, raw json.RawMessage) (string, error) {
	var in missingArgs
	if err := decode("list_missing_invoices", raw, &in); err != nil {
		return "", err
	}
	days := in.Days
	switch {
	case days == 0:
		days = defaultDays
	case days < 0 || days > maxDays:
		return "", fmt.Errorf("list_missing_invoices: days must be between 1 and %d, not %d", maxDays, in.Days)
	}
	side := strings.ToLower(strings.TrimSpace(in.Side))
	switch side {
	case "":
		side = "debit"
	case "debit", "credit":
	default:
		return "", fmt.Errorf("list_missing_invoices: side must be debit or credit, not %q", in.Side)
	}
	rows := adapters.Rows(in.Limit)

	accounts, err := bankAccounts(ctx, c, h)
	if err != nil {
		return "", err
	}
	since := a.now().UTC().AddDate(0, 0, -days).Format(time.RFC3339)
	type found struct {
		transaction
		account string
	}
	var all []found
	for _, b := range accounts {
		q := url.Values{
			"status[]":         {"completed"},
			"side":             {side},
			"settled_at_from":  {since},
			"sort_by":          {"settled_at:desc"},
			"with_attachments": {"false"},
			"per_page":         {strconv.Itoa(perPage)},
		}
		switch {
		case b.ID != "":
			q.Set("bank_account_id", b.ID)
		case b.IBAN != "":
			q.Set("iban", b.IBAN)
		default:
			continue
		}
		kept := 0
		for page := 1; page <= maxPages && kept < rows; page++ {
			// The reference has named the page parameter both ways.
			q.Set("current_page", strconv.Itoa(page))
			q.Set("page", strconv.Itoa(page))
			var ans transactionsAnswer
			if err := c.GetJSON(ctx, "/v2/transactions", q, h, &ans); err != nil {
				return "", err
			}
			for _, tx := range ans.Transactions {
				if tx.missingInvoice() && (tx.Side == "" || tx.Side == side) {
					all = append(all, found{tx, b.Name})
					kept++
				}
			}
			if ans.Meta.NextPage == nil || *ans.Meta.NextPage <= page || len(ans.Transactions) == 0 {
				break
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].SettledAt > all[j].SettledAt })

	t := adapters.NewTable("id", "settled", "account", "counterparty", "amount", "currency", "side", "type", "category")
	for _, f := range all[:min(len(all), rows)] {
		t.Add(f.ID, minute(f.SettledAt), f.account, f.counterparty(), money(f.AmountCents), f.Currency, f.Side, f.OperationType, f.Category)
	}
	return t.String(), nil
}

type transactionArgs struct {
	ID string `json:"id"`
}

func getTransaction(ctx context.Context, _ *Adapter, c adapters.Conn, h http.Header, raw json.RawMessage) (string, error) {
	var in transactionArgs
	if err := decode("get_transaction", raw, &in); err != nil {
		return "", err
	}
	id, err := transactionID(in.ID)
	if err != nil {
		return "", fmt.Errorf("get_transaction: %w", err)
	}
	var ans transactionAnswer
	err = c.GetJSON(ctx, "/v2/transactions/"+url.PathEscape(id), nil, h, &ans)
	var he *adapters.HTTPError
	switch {
	case errors.As(err, &he) && he.Status == http.StatusNotFound:
		return "", fmt.Errorf("get_transaction: Qonto has no transaction %q (use the id column of list_missing_invoices): %w", id, err)
	case err != nil:
		return "", err
	case ans.Transaction == nil:
		return "", errors.New("the service's transaction answer has no transaction")
	}
	tx := *ans.Transaction
	t := adapters.NewTable("id", "status", "side", "settled", "emitted", "counterparty", "amount", "currency", "local_amount", "local_currency",
		"type", "category", "vat_amount", "vat_rate", "card", "reference", "attachments", "attachment_required", "attachment_lost", "note")
	t.Add(tx.ID, tx.Status, tx.Side, minute(tx.SettledAt), minute(tx.EmittedAt), tx.counterparty(), money(tx.AmountCents), tx.Currency,
		money(tx.LocalAmountCents), tx.LocalCurrency, tx.OperationType, tx.Category, money(tx.VATAmountCents), tx.VATRate,
		tx.CardLastDigits, tx.Reference, len(tx.AttachmentIDs), tx.AttachmentRequired, tx.AttachmentLost, adapters.Clip(tx.Note, noteRunes))
	return t.String(), nil
}

// transactionID accepts the service's ids (UUIDs, older slugs); it is
// path-escaped when sent, so only blanks, control characters, slashes and
// dot segments are refused.
func transactionID(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", errors.New("id is required")
	case s == "." || s == ".." || len(s) > 100 ||
		strings.ContainsFunc(s, func(r rune) bool {
			return unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' || r == '?' || r == '#'
		}):
		return "", fmt.Errorf("%q is not a transaction id", raw)
	}
	return s, nil
}

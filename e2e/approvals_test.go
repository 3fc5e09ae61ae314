package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// recipient is where the scripted run sends; an address without letters,
// so its checksummed form is itself.
const recipient = "0x1111111111111111111111111111111111111111"

// TestDeployedApprovals: a Wallet send that an organisation's policy says
// to ask for, through a production-shaped install with ganache as the chain.
// The run waits; the worker process is stopped; an operator of another
// organisation cannot answer, the run's own operator approves through the
// API; the worker starts again and the transfer happens once, with exactly
// the approved recipient and amount. The model's next send, of another
// amount, asks anew and is denied with a reason, which the model reads as
// the call's result. The chain holds one transaction at the end.
func TestDeployedApprovals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	node := startGanache(t)
	send := func(amount string) []toolCall {
		return []toolCall{{"wallet_send", map[string]any{"chain": "ethereum", "to": recipient, "amount": amount}}}
	}
	model := newScriptedModel(t, boxModelKey, send("1.5"), send("2"), nil)
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL})

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Treasury"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Payer"})["id"].(string)
	ann := d.must(201, "POST", "/api/users", map[string]any{"name": "ann", "organisation_id": org})["token"].(string)
	rival := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Rival"})["id"].(string)
	rex := d.must(201, "POST", "/api/users", map[string]any{"name": "rex", "organisation_id": rival})["token"].(string)

	connectValues(t, d, org, "wallet", walletServices(t, node).URL+"/v2", walletValues(), "opensea_api_key")
	// Spend tools start Off; the organisation turns send on and makes it ask.
	d.must(200, "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org,
		"catalog_kind": "mcp_tool", "catalog_id": "wallet_send", "enabled": true})
	d.must(200, "PUT", "/api/approval-policies", map[string]any{"scope": "organisation", "scope_id": org,
		"tool": "wallet_send", "ask": true, "wait": "48h"})

	runID := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Pay the supplier."})["id"].(string)
	first := d.awaitRequest(runID, "")
	if first.Tool != "wallet_send" || !sameJSON(first.Arguments, `{"chain":"ethereum","to":"`+recipient+`","amount":"1.5"}`) {
		t.Fatalf("the request shows %s %s", first.Tool, first.Arguments)
	}
	if n := chainTxs(t, node); len(n) != 0 {
		t.Fatalf("the chain moved before anyone approved: %v", n)
	}

	// Nothing of the platform runs the workflow while the answer comes.
	from := len(d.logs["worker"].String())
	d.stop("worker")
	for who, token := range map[string]string{"an operator of another organisation": rex, "the instance admin": d.Token} {
		if r := d.callAs(token, "POST", "/api/approvals/"+first.ID, map[string]any{"decision": "approve"}); r.Status != 403 && r.Status != 404 {
			t.Fatalf("%s answered the request: %d %s", who, r.Status, r.Body)
		}
	}
	if r := d.callAs(ann, "POST", "/api/approvals/"+first.ID, map[string]any{"decision": "approve"}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	if n := chainTxs(t, node); len(n) != 0 {
		t.Fatalf("the chain moved with no worker up: %v", n)
	}
	d.start("worker")
	d.waitReady(from)

	// The approved send ran; the model's next one, of 2 ETH, asks anew.
	second := d.awaitRequest(runID, first.ID)
	if second.ArgsDigest == first.ArgsDigest || !sameJSON(second.Arguments, `{"chain":"ethereum","to":"`+recipient+`","amount":"2"}`) {
		t.Fatalf("the second request: %s %s (first %s)", second.Arguments, second.ArgsDigest, first.ArgsDigest)
	}
	oneTransfer(t, node, "1.5")
	if r := d.callAs(rex, "POST", "/api/approvals/"+second.ID, map[string]any{"decision": "deny", "reason": "mine"}); r.Status != 403 && r.Status != 404 {
		t.Fatalf("an operator of another organisation denied the request: %d %s", r.Status, r.Body)
	}
	// Ann follows the run in the operator app: the wait shows in the
	// transcript, and she denies the send from the run's page.
	if b := runPageAs(t, d, ann, runID); b != nil {
		b.waitText("#run-waiting", "Waiting for an approval")
		b.waitText("#transcript .msg.approval", "wallet_send runs, approved by ann")
		b.waitText("#transcript .msg.approval", "wallet_send waits for an operator's approval")
		card := `#run-waiting article[data-request="` + second.ID + `"]`
		b.fill(card+" input", "over the weekly limit")
		b.click(card + " button.danger")
		b.waitText("#transcript .msg.approval", "wallet_send denied by ann: over the weekly limit")
	} else if r := d.callAs(ann, "POST", "/api/approvals/"+second.ID, map[string]any{"decision": "deny", "reason": "over the weekly limit"}); r.Status != 200 {
		t.Fatalf("deny: %d %s", r.Status, r.Body)
	}
	if r := d.callAs(ann, "POST", "/api/approvals/"+first.ID, map[string]any{"decision": "approve"}); r.Status != 409 {
		t.Errorf("a spent approval was answered again: %d %s", r.Status, r.Body)
	}

	transcript := d.waitRun(runID)
	tr := transcriptOf(t, transcript)
	if len(tr.ToolCalls) != 2 {
		t.Fatalf("%d tool calls:\n%s", len(tr.ToolCalls), transcript)
	}
	// The transcript shows the wait: whose approval the send ran under.
	if c := tr.ToolCalls[0]; c.Outcome != "ok" || c.Metadata["approval_id"] != first.ID || c.Metadata["approved_by"] != "ann" ||
		c.Metadata["waited"] == nil || !strings.Contains(c.Result, "to: "+recipient) {
		t.Errorf("the approved send: %+v", c)
	}
	const denial = "denied by ann: over the weekly limit"
	if c := tr.ToolCalls[1]; c.Outcome != "denied" || !strings.Contains(c.Result, denial) {
		t.Errorf("the denied send: %+v", c)
	}
	if !strings.Contains(model.Received(), denial) {
		t.Errorf("the model did not read the denial:\n%s", model.Received())
	}
	oneTransfer(t, node, "1.5")

	// No key of the Wallet reaches what the wait wrote or showed.
	inbox := d.callAs(ann, "GET", "/api/orgs/"+org+"/approvals?state=used", nil)
	places := map[string]string{"the transcript": transcript, "what the model received": model.Received(),
		"the run's history": d.history("run-" + runID), "the logs": d.Logs(), "the inbox": string(inbox.Body)}
	for place, text := range places {
		for _, v := range append(d.secrets, walletEVMKey, walletAlchemyKey, walletOpenSeaKey, boxModelKey) {
			if v != "" && strings.Contains(text, v) {
				t.Errorf("%s holds a credential (%.8s…)", place, v)
			}
		}
	}

	// The organisation's audit trail holds each request's life, with who
	// took each step.
	var trail []struct {
		ApprovalID string `json:"approval_id"`
		Outcome    string `json:"outcome"`
		Actor      string `json:"actor"`
	}
	r := d.callAs(ann, "GET", "/api/orgs/"+org+"/audit?action=approval&run_id="+runID, nil)
	if err := json.Unmarshal(r.Body, &trail); err != nil || r.Status != 200 {
		t.Fatalf("audit trail: %d %s", r.Status, r.Body)
	}
	life := map[string][]string{}
	for i := len(trail) - 1; i >= 0; i-- { // oldest first
		e := trail[i]
		who, _, _ := strings.Cut(e.Actor, ":")
		life[e.ApprovalID] = append(life[e.ApprovalID], e.Outcome+" by "+who)
	}
	for id, want := range map[string]string{first.ID: "proposed by agent, approved by user, executed by agent, returned by agent",
		second.ID: "proposed by agent, denied by user"} {
		if got := strings.Join(life[id], ", "); got != want {
			t.Errorf("request %s in the audit trail: %s, want %s", id, got, want)
		}
	}
}

// runPageAs signs in to the operator app with token and opens the run's
// page; nil without Chromium (the API answers instead).
func runPageAs(t *testing.T, d *deployment, token, runID string) *browser {
	t.Helper()
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (apt-get install chromium)")
		}
		t.Log("no Chromium at /usr/bin/chromium: the run page is not checked")
		return nil
	}
	b := newBrowser(t, chromium, d.API, t.TempDir())
	b.open("/")
	b.waitText("h1", "Sign in")
	b.fill(`input[name="token"]`, token)
	b.submit(`form[aria-label="Sign in"]`)
	b.waitText("h1", "Organisations")
	b.open("/runs/" + runID)
	b.waitText("#run-status", "waiting")
	return b
}

// approvalRequest is what the API shows of a request.
type approvalRequest struct {
	ID         string          `json:"id"`
	Tool       string          `json:"tool"`
	State      string          `json:"state"`
	ArgsDigest string          `json:"args_digest"`
	Arguments  json.RawMessage `json:"arguments"`
}

// awaitRequest waits for the run to be waiting on a pending request other
// than not, and returns it. It reads the API again at each notification of
// the run's events (a status change, a message), never on a clock.
func (d *deployment) awaitRequest(runID, not string) approvalRequest {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a failure bound
	defer cancel()
	conn, err := pgx.Connect(ctx, d.vars["DATABASE_URL"])
	if err != nil {
		d.t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN guilds_run_events"); err != nil {
		d.t.Fatal(err)
	}
	for {
		run := d.must(200, "GET", "/api/runs/"+runID, nil)["run"].(map[string]any)
		switch run["status"] {
		case "waiting":
			var reqs []approvalRequest
			r := d.Call("GET", "/api/runs/"+runID+"/approvals", nil)
			if err := json.Unmarshal(r.Body, &reqs); err != nil {
				d.t.Fatalf("approvals of the run: %d %s", r.Status, r.Body)
			}
			for _, q := range reqs {
				if q.State == "pending" && q.ID != not {
					return q
				}
			}
		case "completed", "failed", "cancelled":
			d.t.Fatalf("the run ended (%s) instead of waiting\n%s", run["status"], d.Logs())
		}
		if _, err := conn.WaitForNotification(ctx); err != nil {
			d.t.Fatalf("run %s did not wait for an approval: %v\n%s", runID, err, d.Logs())
		}
	}
}

// callAs is Call with another principal's API token.
func (d *deployment) callAs(token, method, path string, body any) reply {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, d.API+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, out}
}

func sameJSON(got json.RawMessage, want string) bool {
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && fmt.Sprint(a) == fmt.Sprint(b)
}

// chainTx is a transaction as the node reports it.
type chainTx struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Value string `json:"value"` // hex wei
}

// chainTxs reads every transaction of every block the node mined.
func chainTxs(t *testing.T, node string) []chainTx {
	t.Helper()
	var head string
	nodeCall(t, node, "eth_blockNumber", &head)
	n, ok := new(big.Int).SetString(strings.TrimPrefix(head, "0x"), 16)
	if !ok {
		t.Fatalf("block number %q", head)
	}
	var all []chainTx
	for i := int64(1); i <= n.Int64(); i++ {
		var block struct {
			Transactions []chainTx `json:"transactions"`
		}
		nodeCall(t, node, "eth_getBlockByNumber", &block, fmt.Sprintf("0x%x", i), true)
		all = append(all, block.Transactions...)
	}
	return all
}

// oneTransfer checks the chain holds exactly one transaction: eth to the
// recipient.
func oneTransfer(t *testing.T, node, eth string) {
	t.Helper()
	txs := chainTxs(t, node)
	want, ok := weiOf(eth)
	if !ok {
		t.Fatalf("amount %q", eth)
	}
	if len(txs) != 1 {
		t.Fatalf("the chain holds %d transactions, want 1: %+v", len(txs), txs)
	}
	got, _ := new(big.Int).SetString(strings.TrimPrefix(txs[0].Value, "0x"), 16)
	if !strings.EqualFold(txs[0].To, recipient) || got == nil || got.Cmp(want) != 0 {
		t.Fatalf("the transaction sent %s wei to %s, want %s wei to %s", got, txs[0].To, want, recipient)
	}
}

// weiOf converts a decimal ether amount to wei exactly.
func weiOf(eth string) (*big.Int, bool) {
	r, ok := new(big.Rat).SetString(eth)
	if !ok {
		return nil, false
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)))
	if !r.IsInt() {
		return nil, false
	}
	return r.Num(), true
}

// nodeCall is one JSON-RPC call to the local node.
func nodeCall(t *testing.T, node, method string, out any, params ...any) {
	t.Helper()
	if params == nil {
		params = []any{}
	}
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := http.Post(node, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Error != nil {
		t.Fatalf("%s: %v %+v", method, err, r.Error)
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

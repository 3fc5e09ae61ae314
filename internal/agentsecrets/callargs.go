package agentsecrets

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// StoreTool is the tool whose arguments never cross the workflow boundary.
const StoreTool = "secret_store"

// CallAAD binds sealed call arguments to their run and seq.
func CallAAD(runID string, seq int) []byte {
	return []byte("secret_call_arguments\x00" + runID + "\x00" + strconv.Itoa(seq))
}

// Vault keeps the arguments of secret_store calls out of the workflow: the
// model activity hands them to Hide before it returns the model's answer,
// and stores and returns only the shown form; the tool activity takes them
// back with Reveal. activities/run names it ArgumentVault.
type Vault struct {
	DB      store.DB
	Keyring *secret.Keyring
}

// Sealed reports whether a tool's arguments go through the vault.
func (Vault) Sealed(tool string) bool { return tool == StoreTool }

// Hide seals the arguments of the call whose result goes at seq, and
// returns the form the transcript, the model and the workflow see (the
// value replaced by the redaction marker) and the values it hid.
func (v Vault) Hide(ctx context.Context, runID string, seq int, callID, args string) (shown string, hidden []string, err error) {
	shown, hidden = Shown(args)
	if v.Keyring == nil {
		return shown, hidden, nil // nothing can be stored: the call fails with ErrNoKeyring
	}
	ct, err := v.Keyring.Seal([]byte(args), CallAAD(runID, seq))
	if err != nil {
		return "", nil, err
	}
	_, err = v.DB.Exec(ctx, `INSERT INTO secret_call_arguments (run_id, seq, call_id, key_id, ciphertext) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (run_id, seq) DO UPDATE SET call_id = excluded.call_id, key_id = excluded.key_id, ciphertext = excluded.ciphertext`,
		runID, seq, callID, v.Keyring.ActiveKeyID(), ct)
	return shown, hidden, store.Map(err)
}

// Reveal returns the arguments Hide sealed for the call at seq, and the
// values they hold; ok is false when there are none (the model activity of
// an older worker, or a call already done and forgotten).
func (v Vault) Reveal(ctx context.Context, runID string, seq int, callID string) (args string, hidden []string, ok bool, err error) {
	var ct []byte
	var storedCall string
	err = v.DB.QueryRow(ctx, `SELECT call_id, ciphertext FROM secret_call_arguments WHERE run_id = $1 AND seq = $2`,
		runID, seq).Scan(&storedCall, &ct)
	if err := store.Map(err); err == store.ErrNotFound {
		return "", nil, false, nil
	} else if err != nil {
		return "", nil, false, err
	}
	if storedCall != callID || v.Keyring == nil {
		return "", nil, false, nil
	}
	pt, err := v.Keyring.Open(ct, CallAAD(runID, seq))
	if err != nil {
		return "", nil, false, err
	}
	args = string(pt)
	_, hidden = Shown(args)
	return args, hidden, true, nil
}

// Forget deletes the sealed arguments of one call (seq > 0) or of every
// call of the run (seq = 0).
func (v Vault) Forget(ctx context.Context, runID string, seq int) error {
	_, err := v.DB.Exec(ctx, `DELETE FROM secret_call_arguments WHERE run_id = $1 AND ($2 = 0 OR seq = $2)`, runID, seq)
	return store.Map(err)
}

// Shown is the form of secret_store arguments that may be stored and shown:
// the name kept, the value replaced by the redaction marker. hidden holds
// the value.
func Shown(args string) (shown string, hidden []string) {
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil || a == nil {
		// Not an object: nothing of it is kept (the tool refuses it anyway).
		if args != "" {
			hidden = []string{args}
		}
		return `{"value":"` + tools.RedactionMarker + `"}`, hidden
	}
	out := map[string]any{}
	if n, ok := a["name"].(string); ok && len(n) <= 80 {
		out["name"] = n
	}
	for k, val := range a {
		if k == "name" {
			continue
		}
		if s, ok := val.(string); ok && s != "" {
			hidden = append(hidden, s)
		}
		if k == "value" {
			out[k] = tools.RedactionMarker
		}
	}
	raw, _ := json.Marshal(out)
	return string(raw), hidden
}

package approvals

import (
	"errors"
	"fmt"
	"time"
)

// Binding is everything an approval is bound to. An approved request lets
// exactly the call with equal fields run, and only before ExpiresAt.
type Binding struct {
	RunID   string `json:"run_id"`
	Seq     int    `json:"seq"` // the call's result seq: one approval, one call
	AgentID string `json:"agent_id"`
	Tool    string `json:"tool"`
	// LoginID is the connection that would serve the call; "" for a native
	// tool or a server that needs no login.
	LoginID       string    `json:"login_id"`
	ArgsDigest    string    `json:"args_digest"`
	PolicyVersion string    `json:"policy_version"`
	ExpiresAt     time.Time `json:"expires_at"`
}

// Why a call does not match its approval. Each is a reason to ask again,
// except ErrExpired, which is a denial.
var (
	ErrExpired         = errors.New("the approval expired before the call ran")
	ErrArgumentsDiffer = errors.New("the call's arguments differ from the approved ones")
	ErrLoginDiffers    = errors.New("the call would be served by another login than the approved one")
	ErrPolicyChanged   = errors.New("the policy changed after the approval was asked for")
	ErrOtherCall       = errors.New("the approval is for another call")
)

// Check tells whether the call described by got may run under the approval
// bound to b at time now.
func (b Binding) Check(got Binding, now time.Time) error {
	if err := b.SameCall(got); err != nil {
		return err
	}
	if !now.Before(b.ExpiresAt) {
		return ErrExpired
	}
	return nil
}

// SameCall is Check without the expiry: got is the very call b approves.
func (b Binding) SameCall(got Binding) error {
	switch {
	case b.RunID != got.RunID || b.Seq != got.Seq || b.AgentID != got.AgentID || b.Tool != got.Tool:
		return ErrOtherCall
	case b.ArgsDigest != got.ArgsDigest:
		return ErrArgumentsDiffer
	case b.LoginID != got.LoginID:
		return ErrLoginDiffers
	case b.PolicyVersion != got.PolicyVersion:
		return ErrPolicyChanged
	}
	return nil
}

// Waiting bounds: how long a run may wait for a person.
const (
	DefaultWait = 24 * time.Hour
	MaxWait     = 30 * 24 * time.Hour
)

// WaitFor validates an operator's waiting time; zero means the default.
func WaitFor(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return DefaultWait, nil
	case d < time.Minute:
		return 0, fmt.Errorf("a run waits at least a minute for an approval, not %s", d)
	case d > MaxWait:
		return 0, fmt.Errorf("a run waits at most 30 days for an approval, not %s", d)
	}
	return d, nil
}

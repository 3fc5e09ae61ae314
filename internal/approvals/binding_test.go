package approvals

import (
	"errors"
	"testing"
	"time"
)

func TestAnApprovalLetsOnlyItsOwnCallRun(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	approved := Binding{RunID: "r1", Seq: 4, AgentID: "a1", Tool: "wallet_send", LoginID: "c1",
		ArgsDigest: "sha256:aa", PolicyVersion: "p1:01", ExpiresAt: now.Add(time.Hour)}
	if err := approved.Check(approved, now); err != nil {
		t.Fatalf("the approved call itself: %v", err)
	}
	change := func(f func(*Binding)) Binding { b := approved; f(&b); return b }
	cases := []struct {
		got  Binding
		at   time.Time
		want error
	}{
		{change(func(b *Binding) { b.ArgsDigest = "sha256:ab" }), now, ErrArgumentsDiffer},
		{change(func(b *Binding) { b.LoginID = "c2" }), now, ErrLoginDiffers},
		{change(func(b *Binding) { b.PolicyVersion = "p1:02" }), now, ErrPolicyChanged},
		{change(func(b *Binding) { b.Seq = 5 }), now, ErrOtherCall},
		{change(func(b *Binding) { b.RunID = "r2" }), now, ErrOtherCall},
		{change(func(b *Binding) { b.AgentID = "a2" }), now, ErrOtherCall},
		{change(func(b *Binding) { b.Tool = "wallet_swap" }), now, ErrOtherCall},
		{approved, now.Add(time.Hour), ErrExpired},
	}
	for i, c := range cases {
		if err := approved.Check(c.got, c.at); !errors.Is(err, c.want) {
			t.Errorf("case %d: %v, want %v", i, err, c.want)
		}
	}
}

func TestWaitingTimeIsBounded(t *testing.T) {
	if d, _ := WaitFor(0); d != DefaultWait {
		t.Errorf("default wait %s", d)
	}
	for _, d := range []time.Duration{time.Second, 31 * 24 * time.Hour} {
		if _, err := WaitFor(d); err == nil {
			t.Errorf("WaitFor(%s) accepted", d)
		}
	}
}

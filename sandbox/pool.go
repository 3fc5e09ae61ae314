package sandbox

import "context"

// LabelPool marks a sandbox created ahead of time for the next agent that
// needs one (Pooler).
const LabelPool = "guilds.pool"

// Pool describes the sandboxes a Pooler keeps ready.
type Pool struct {
	// Size is how many are kept ready; each claim starts the creation of
	// a replacement.
	Size int
	// Template is their shape: image, user and limits. A Create whose
	// spec has the same shape, a HomeVolume, no Command, Env or Labels,
	// and only binds at BindTargets takes one; any other spec gets a new
	// sandbox as before.
	Template Spec
	// BindTargets are the places where a claimed sandbox can receive its
	// Spec.Binds.
	BindTargets []string
}

// Pooler is a driver that can create sandboxes before an agent asks for
// one, and attach the agent's home (and binds) only when one is claimed:
// a pooled sandbox never held anything of another agent. Create claims
// one transparently when its spec fits.
type Pooler interface {
	// StartPool begins keeping p.Size sandboxes ready, in the background.
	// It fails when the driver cannot attach a home after creation here
	// (say, a remote engine); the driver then creates every sandbox on
	// demand, as without a pool.
	StartPool(ctx context.Context, p Pool) error
	// PoolReady is how many sandboxes are ready to be claimed now.
	PoolReady() int
}

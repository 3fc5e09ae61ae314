package sandbox

import "context"

// Parker is a driver that can set a sandbox aside between uses more cheaply
// than removing it: Park ends every process in it but its first one and
// freezes it; Unpark thaws it, ready for the next command. Files outside the
// home are cleared by Park, so a parked sandbox comes back as a new one
// would, only sooner. A driver without it is stopped by Remove alone.
type Parker interface {
	Park(ctx context.Context, id string) error
	Unpark(ctx context.Context, id string) error
}

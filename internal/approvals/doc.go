// Package approvals holds what an operator's "ask me first" is made of,
// before any table or workflow touches it: the canonical digest that binds an
// approval to one call's arguments, the small typed rule language that decides
// when a tool asks, and the binding an approved call must match to run.
//
// It owns the table approval_requests (store.go). Apart from that file it
// imports nothing of the platform, so the run workflow can share its types.
package approvals

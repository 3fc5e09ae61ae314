//go:build load

package run

// SetFairness turns the priority runs are started with on or off, so the
// fairness harness can compare the two on one server.
func SetFairness(on bool) { fairness = on }

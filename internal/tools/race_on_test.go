//go:build race

package tools

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts are not meaningful in that build.
const raceEnabled = true

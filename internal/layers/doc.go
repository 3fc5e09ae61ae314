// Package layers holds the module's import rules as a test: which packages
// may import which, so that an arrow pointing back up the layers fails
// `go test` the way SQL written in api/ does (api/no_sql_test.go).
//
// It has no code of its own. `go test ./internal/layers -run TestNoArrowPointsUp -v`
// lists every arrow that points up, the known exceptions included.
package layers

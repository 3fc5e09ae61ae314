// Package kit lives in a folder whose name is not its package's.
package kit

// Make builds a kit.
func Make() int { return 1 }

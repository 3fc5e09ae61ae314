// Package process hardens the platform's own process at start: no other
// process of its user may read its memory or its initial environment, and
// credentials can come from files instead of that environment.
package process

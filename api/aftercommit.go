package api

import "github.com/gin-gonic/gin"

const afterCommitKey = "guilds.afterCommit"

// afterCommit queues fn to run once the request's work has committed: after
// the transaction of a mutating route, after the handler of a NoTx one.
// A request that fails drops what it queued, so nothing is announced that
// did not happen.
func afterCommit(c *gin.Context, fn func()) {
	var fns []func()
	if v, ok := c.Get(afterCommitKey); ok {
		fns = v.([]func())
	}
	c.Set(afterCommitKey, append(fns, fn))
}

func runAfterCommit(c *gin.Context) {
	v, ok := c.Get(afterCommitKey)
	if !ok {
		return
	}
	for _, fn := range v.([]func()) {
		fn()
	}
}

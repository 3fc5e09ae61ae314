package api

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/errorreport"
)

// reportTags names the organisation, guild, agent or run a request's path
// addresses, for an error report; nothing of the request itself goes.
func reportTags(c *gin.Context) errorreport.Tags {
	t := errorreport.Tags{Component: "api " + c.Request.Method + " " + c.FullPath()}
	segs := strings.Split(strings.Trim(c.FullPath(), "/"), "/")
	for i := 1; i < len(segs); i++ {
		if !strings.HasPrefix(segs[i], ":") {
			continue
		}
		v := c.Param(segs[i][1:])
		switch segs[i-1] {
		case "orgs":
			t.Org = v
		case "guilds":
			t.Guild = v
		case "agents":
			t.Agent = v
		case "runs":
			t.Run = v
		}
	}
	return t
}

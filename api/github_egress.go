package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

type guildEgressInput struct {
	Enabled *bool `json:"enabled"`
}

type guildEgressReply struct {
	GuildID string `json:"guild_id"`
	Enabled bool   `json:"enabled"`
}

// setGuildEgress records whether the guild's coding agents reach GitHub
// from their sandboxes (ADR 0705); the next generation follows it.
func setGuildEgress(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in guildEgressInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if in.Enabled == nil {
		return 0, nil, invalidField("enabled", "is required (true or false)")
	}
	pl, err := grants.LoadPlace(ctx, db, grants.ScopeGuild, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	if !p.CanSeeOrg(pl.OrgID) {
		return 0, nil, store.ErrNotFound
	}
	if err := githubapp.SetGuildEgress(ctx, db, pl.GuildID, *in.Enabled); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, guildEgressReply{GuildID: pl.GuildID, Enabled: *in.Enabled}, nil
}

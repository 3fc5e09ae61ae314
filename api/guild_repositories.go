package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// A guild's extra git URLs: repositories its agents work on that no GitHub
// login selected (the rows a login writes are changed through the login).

func (s *Server) guildRepositoryRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/guilds/:id/repositories", Tag: "connections",
			Summary: "Add an extra git URL to a guild (https, no credentials in it; the name defaults to the URL's last segment)",
			Body:    githubapp.ExtraRepository{}, Reply: githubapp.GuildRepository{}, Handle: addGuildRepository},
		{Method: "DELETE", Path: "/api/guilds/:id/repositories/:repo", Tag: "connections",
			Summary: "Remove one of a guild's extra git URLs (a GitHub login's repositories change through its selection)",
			Handle:  removeGuildRepository},
	}
}

func guildPlace(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (grants.Place, error) {
	pl, err := grants.LoadPlace(ctx, db, grants.ScopeGuild, c.Param("id"))
	if err != nil {
		return pl, err
	}
	if !p.CanSeeOrg(pl.OrgID) {
		return pl, store.ErrNotFound
	}
	return pl, nil
}

func addGuildRepository(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in githubapp.ExtraRepository
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	pl, err := guildPlace(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	if err := in.Check(); err != nil {
		return 0, nil, err
	}
	g, err := githubapp.AddExtraRepository(ctx, db, pl.GuildID, in)
	if errors.Is(err, store.ErrConflict) {
		return 0, nil, &Error{Status: http.StatusConflict, Code: "conflict", Message: "the guild lists " + in.URL + " already"}
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, g, nil
}

func removeGuildRepository(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	pl, err := guildPlace(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	err = githubapp.RemoveExtraRepository(ctx, db, pl.GuildID, c.Param("repo"))
	if errors.Is(err, githubapp.ErrFromLogin) {
		return 0, nil, &Error{Status: http.StatusConflict, Code: "conflict", Message: err.Error()}
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

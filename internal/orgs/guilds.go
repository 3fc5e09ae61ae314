package orgs

import (
	"context"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Guild is a team of agents inside an organisation.
type Guild struct {
	ID             string    `json:"id"`
	OrganisationID string    `json:"organisation_id"`
	Name           string    `json:"name"`
	Description    string    `json:"description"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// GuildInput creates or changes a guild; nil fields are left as they are.
type GuildInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

const guildCols = `id, organisation_id, name, description, created_at, updated_at`

func scanGuild(row interface{ Scan(...any) error }) (Guild, error) {
	var g Guild
	err := row.Scan(&g.ID, &g.OrganisationID, &g.Name, &g.Description, &g.CreatedAt, &g.UpdatedAt)
	return g, err
}

func checkGuild(in GuildInput, create bool) error {
	var probs validation.Problems
	checkName(&probs, "name", in.Name, create)
	if in.Description != nil {
		probs.Check(len(*in.Description) <= 4000, "description", "must be at most 4000 characters")
	}
	return probs.Err()
}

// CreateGuild adds a guild to a visible organisation.
func CreateGuild(ctx context.Context, db store.DB, p access.Principal, orgID string, in GuildInput) (Guild, error) {
	if _, err := GetOrg(ctx, db, p, orgID); err != nil {
		return Guild{}, err
	}
	if err := checkGuild(in, true); err != nil {
		return Guild{}, err
	}
	desc := ""
	if in.Description != nil {
		desc = *in.Description
	}
	g, err := scanGuild(db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name, description)
		VALUES ($1, $2, $3) RETURNING `+guildCols, orgID, strings.TrimSpace(*in.Name), desc))
	return g, store.Map(err)
}

// ListGuilds lists the guilds of a visible organisation.
func ListGuilds(ctx context.Context, db store.DB, p access.Principal, orgID string) ([]Guild, error) {
	if _, err := GetOrg(ctx, db, p, orgID); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT `+guildCols+` FROM guilds WHERE organisation_id = $1 ORDER BY name`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Guild{}
	for rows.Next() {
		g, err := scanGuild(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// GetGuild returns a guild of a visible organisation.
func GetGuild(ctx context.Context, db store.DB, p access.Principal, id string) (Guild, error) {
	g, err := scanGuild(db.QueryRow(ctx, `SELECT `+guildCols+` FROM guilds WHERE id = $1`, id))
	if err != nil {
		return g, store.Map(err)
	}
	if !p.CanSeeOrg(g.OrganisationID) {
		return Guild{}, store.ErrNotFound
	}
	return g, nil
}

// UpdateGuild changes the given fields of a visible guild.
func UpdateGuild(ctx context.Context, db store.DB, p access.Principal, id string, in GuildInput) (Guild, error) {
	if _, err := GetGuild(ctx, db, p, id); err != nil {
		return Guild{}, err
	}
	if err := checkGuild(in, false); err != nil {
		return Guild{}, err
	}
	g, err := scanGuild(db.QueryRow(ctx, `UPDATE guilds SET name = coalesce($2, name),
		description = coalesce($3, description), updated_at = now() WHERE id = $1 RETURNING `+guildCols,
		id, trimmed(in.Name), in.Description))
	return g, store.Map(err)
}

// DeleteGuild removes a visible guild and its agents.
func DeleteGuild(ctx context.Context, db store.DB, p access.Principal, id string) error {
	if _, err := GetGuild(ctx, db, p, id); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM guilds WHERE id = $1`, id)
	return store.Map(err)
}

package access

import (
	"context"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Account is a user as the instance admin's list shows it: who they are,
// whether they may sign in, and the organisations they operate.
type Account struct {
	User
	DisabledAt    *time.Time `json:"disabled_at"`
	CreatedAt     time.Time  `json:"created_at"`
	Organisations []OrgRef   `json:"organisations"`
}

// OrgRef names an organisation a user belongs to.
type OrgRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ListUsers lists every user, oldest first, with their organisations.
func ListUsers(ctx context.Context, db store.DB) ([]Account, error) {
	rows, err := db.Query(ctx, `SELECT u.id, u.name, coalesce(u.email, ''), u.instance_admin, u.disabled_at, u.created_at,
		coalesce(json_agg(json_build_object('id', o.id, 'name', o.name) ORDER BY o.name) FILTER (WHERE o.id IS NOT NULL), '[]')
		FROM users u LEFT JOIN memberships m ON m.user_id = u.id LEFT JOIN organisations o ON o.id = m.organisation_id
		GROUP BY u.id ORDER BY u.created_at, u.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Account{}
	for rows.Next() {
		var a Account
		if err := rows.Scan(&a.ID, &a.Name, &a.Email, &a.InstanceAdmin, &a.DisabledAt, &a.CreatedAt, &a.Organisations); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

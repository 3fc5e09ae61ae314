// Package access holds operators: users, their hashed API tokens, their
// memberships in organisations, and the Principal a request acts as.
package access

import (
	"context"
	"errors"

	"github.com/guilds/guilds/internal/store"
)

// Role of a user in an organisation.
const RoleOperator = "operator"

// TokenPrefix starts every API token so that a leaked one is easy to recognise.
const TokenPrefix = "gld_"

var (
	// ErrUnauthenticated: no valid credential came with the request.
	ErrUnauthenticated = errors.New("a valid API token is required (Authorization: Bearer gld_…)")
	// ErrForbidden: the caller is known but may not do this.
	ErrForbidden = errors.New("forbidden")
)

// Principal is who a request acts as.
type Principal struct {
	UserID string
	Admin  bool
	// Orgs maps each organisation id the user belongs to onto its role there.
	Orgs map[string]string
}

// CanSeeOrg reports whether the principal may see an organisation and what it holds.
func (p Principal) CanSeeOrg(orgID string) bool {
	if p.Admin {
		return true
	}
	_, ok := p.Orgs[orgID]
	return ok
}

// User is an operator account.
type User struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Email         string `json:"email,omitempty"`
	InstanceAdmin bool   `json:"instance_admin"`
}

// CreateUser inserts a user.
func CreateUser(ctx context.Context, db store.DB, name, email string, admin bool) (User, error) {
	u := User{Name: name, Email: email, InstanceAdmin: admin}
	var emailArg any
	if email != "" {
		emailArg = email
	}
	err := db.QueryRow(ctx, `INSERT INTO users (name, email, instance_admin) VALUES ($1, $2, $3) RETURNING id`,
		name, emailArg, admin).Scan(&u.ID)
	return u, store.Map(err)
}

// LocalUser returns the single user that acts for every request in local auth mode.
func LocalUser(ctx context.Context, db store.DB) (User, error) {
	u := User{Name: "local", Email: "local@guilds.invalid", InstanceAdmin: true}
	err := db.QueryRow(ctx, `INSERT INTO users (name, email, instance_admin) VALUES ($1, $2, true)
		ON CONFLICT (email) DO UPDATE SET instance_admin = true RETURNING id`, u.Name, u.Email).Scan(&u.ID)
	return u, store.Map(err)
}

// Load builds the principal of a user id.
func Load(ctx context.Context, db store.DB, userID string) (Principal, error) {
	p := Principal{UserID: userID, Orgs: map[string]string{}}
	if err := db.QueryRow(ctx, `SELECT instance_admin FROM users WHERE id = $1`, userID).Scan(&p.Admin); err != nil {
		return p, store.Map(err)
	}
	rows, err := db.Query(ctx, `SELECT organisation_id, role FROM memberships WHERE user_id = $1`, userID)
	if err != nil {
		return p, err
	}
	defer rows.Close()
	for rows.Next() {
		var org, role string
		if err := rows.Scan(&org, &role); err != nil {
			return p, err
		}
		p.Orgs[org] = role
	}
	return p, rows.Err()
}

// AddMember makes a user an operator of an organisation (idempotent).
func AddMember(ctx context.Context, db store.DB, userID, orgID, role string) error {
	_, err := db.Exec(ctx, `INSERT INTO memberships (user_id, organisation_id, role) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, organisation_id) DO UPDATE SET role = EXCLUDED.role`, userID, orgID, role)
	return store.Map(err)
}

// RemoveMember ends a membership.
func RemoveMember(ctx context.Context, db store.DB, userID, orgID string) error {
	tag, err := db.Exec(ctx, `DELETE FROM memberships WHERE user_id = $1 AND organisation_id = $2`, userID, orgID)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Member is a user with its role in one organisation.
type Member struct {
	User
	Role string `json:"role"`
}

// Members lists an organisation's operators.
func Members(ctx context.Context, db store.DB, orgID string) ([]Member, error) {
	rows, err := db.Query(ctx, `SELECT u.id, u.name, coalesce(u.email, ''), u.instance_admin, m.role
		FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organisation_id = $1 ORDER BY u.name`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Member{}
	for rows.Next() {
		var m Member
		if err := rows.Scan(&m.ID, &m.Name, &m.Email, &m.InstanceAdmin, &m.Role); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

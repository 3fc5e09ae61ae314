// Package orgs holds the operator's hierarchy: organisations, their guilds and
// the agents of each guild. Visibility is by membership of the organisation:
// what a principal cannot see does not exist for it (ErrNotFound).
package orgs

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Organisation is the top of the hierarchy.
type Organisation struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Slug      string    `json:"slug"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// OrgInput creates or changes an organisation; nil fields are left as they are.
type OrgInput struct {
	Name *string `json:"name"`
	Slug *string `json:"slug"`
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Slugify derives a slug from a name.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}

func checkName(p *validation.Problems, field string, name *string, required bool) {
	if name == nil {
		p.Check(!required, field, "is required")
		return
	}
	n := strings.TrimSpace(*name)
	p.Check(n != "", field, "must not be empty")
	p.Check(len(n) <= 200, field, "must be at most 200 characters")
}

// CreateOrg inserts an organisation; a non-admin creator becomes its operator.
func CreateOrg(ctx context.Context, db store.DB, p access.Principal, in OrgInput) (Organisation, error) {
	var probs validation.Problems
	checkName(&probs, "name", in.Name, true)
	slug := ""
	if in.Slug != nil {
		slug = *in.Slug
		probs.Check(slugRE.MatchString(slug), "slug", "must hold only lower-case letters, digits and -, start with a letter or digit, and be at most 63 characters, like acme-sales")
	} else if in.Name != nil {
		slug = Slugify(*in.Name)
		probs.Check(slug != "", "slug", "cannot be derived from the name; give one")
	}
	if err := probs.Err(); err != nil {
		return Organisation{}, err
	}
	var o Organisation
	err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ($1, $2)
		RETURNING id, name, slug, created_at, updated_at`, strings.TrimSpace(*in.Name), slug).
		Scan(&o.ID, &o.Name, &o.Slug, &o.CreatedAt, &o.UpdatedAt)
	if err != nil {
		return o, store.Map(err)
	}
	if !p.Admin && p.UserID != "" {
		if err := access.AddMember(ctx, db, p.UserID, o.ID, access.RoleOperator); err != nil {
			return o, err
		}
	}
	return o, nil
}

const orgCols = `id, name, slug, created_at, updated_at`

func scanOrg(row interface{ Scan(...any) error }) (Organisation, error) {
	var o Organisation
	err := row.Scan(&o.ID, &o.Name, &o.Slug, &o.CreatedAt, &o.UpdatedAt)
	return o, err
}

// ListOrgs returns the organisations the principal may see.
func ListOrgs(ctx context.Context, db store.DB, p access.Principal) ([]Organisation, error) {
	rows, err := db.Query(ctx, `SELECT `+orgCols+` FROM organisations o
		WHERE $1 OR EXISTS (SELECT 1 FROM memberships m WHERE m.organisation_id = o.id AND m.user_id::text = $2)
		ORDER BY name`, p.Admin, p.UserID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Organisation{}
	for rows.Next() {
		o, err := scanOrg(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// GetOrg returns one visible organisation.
func GetOrg(ctx context.Context, db store.DB, p access.Principal, id string) (Organisation, error) {
	if !p.CanSeeOrg(id) {
		return Organisation{}, store.ErrNotFound
	}
	o, err := scanOrg(db.QueryRow(ctx, `SELECT `+orgCols+` FROM organisations WHERE id = $1`, id))
	return o, store.Map(err)
}

// UpdateOrg changes the given fields of a visible organisation.
func UpdateOrg(ctx context.Context, db store.DB, p access.Principal, id string, in OrgInput) (Organisation, error) {
	if _, err := GetOrg(ctx, db, p, id); err != nil {
		return Organisation{}, err
	}
	var probs validation.Problems
	checkName(&probs, "name", in.Name, false)
	if in.Slug != nil {
		probs.Check(slugRE.MatchString(*in.Slug), "slug", "must hold only lower-case letters, digits and -, start with a letter or digit, and be at most 63 characters, like acme-sales")
	}
	if err := probs.Err(); err != nil {
		return Organisation{}, err
	}
	o, err := scanOrg(db.QueryRow(ctx, `UPDATE organisations SET
		name = coalesce($2, name), slug = coalesce($3, slug), updated_at = now()
		WHERE id = $1 RETURNING `+orgCols, id, trimmed(in.Name), in.Slug))
	return o, store.Map(err)
}

// DeleteOrg removes a visible organisation with everything it holds.
func DeleteOrg(ctx context.Context, db store.DB, p access.Principal, id string) error {
	if _, err := GetOrg(ctx, db, p, id); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM organisations WHERE id = $1`, id)
	return store.Map(err)
}

func trimmed(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	return &t
}

package githubapp

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
)

// NeedsApprovalError: the installation is attached to another organisation
// of the box already; an instance admin has to approve this one first.
type NeedsApprovalError struct{ Account string }

func (e *NeedsApprovalError) Error() string {
	return "the GitHub installation of " + e.Account + " is attached to another organisation of this box: " +
		"an instance admin has to approve it for this organisation (GET /api/admin/github/approvals), then connect again"
}

// loginOrg is the organisation a github login belongs to ("" for a
// platform login), by the hierarchy.
const loginOrg = `CASE c.owner_scope WHEN 'organisation' THEN c.owner_id WHEN 'guild' THEN og.organisation_id
    WHEN 'agent' THEN ag.organisation_id END`

const loginJoins = `FROM github_logins l
JOIN mcp_connections c ON c.id = l.connection_id
LEFT JOIN guilds og ON c.owner_scope = 'guild' AND og.id = c.owner_id
LEFT JOIN agents aa ON c.owner_scope = 'agent' AND aa.id = c.owner_id
LEFT JOIN guilds ag ON ag.id = aa.guild_id`

// Attach stores the installation a login keeps, with what its user reaches
// in it, when CheckAttach lets it; otherwise it answers the
// *NeedsApprovalError, the request recorded. The check and the save run in
// one transaction holding a lock on the installation, so two organisations
// attaching it at once cannot both pass the check.
func Attach(ctx context.Context, db *pgxpool.Pool, connectionID string, c Choice, now time.Time) error {
	var na *NeedsApprovalError
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('github-installation:' || $1::bigint, 0))`,
			c.InstallationID); err != nil {
			return store.Map(err)
		}
		err := CheckAttach(ctx, tx, connectionID, c.InstallationID, c.Account)
		if errors.As(err, &na) {
			return nil // the request it recorded is kept
		}
		if err != nil {
			return err
		}
		if err := SaveLogin(ctx, tx, connectionID, c.InstallationID, c.Account); err != nil {
			return err
		}
		return SaveAccess(ctx, tx, connectionID, c.Repositories, now)
	})
	if err == nil && na != nil {
		return na
	}
	return err
}

// CheckAttach lets a login attach an installation when no other
// organisation's login holds it, or an instance admin approved it for the
// login's organisation; otherwise it records the request and answers a
// *NeedsApprovalError. A platform login (made by an instance admin) is
// not checked.
func CheckAttach(ctx context.Context, db store.DB, connectionID string, installationID int64, account string) error {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return err
	}
	conn, err := connstore.Get(ctx, db, id)
	if err != nil || conn.OrgID == "" {
		return err
	}
	var elsewhere, approved bool
	if err := db.QueryRow(ctx, `SELECT
    EXISTS (SELECT 1 `+loginJoins+` WHERE l.installation_id = $1 AND l.connection_id <> $3
        AND (`+loginOrg+`) IS NOT NULL AND (`+loginOrg+`) <> $2),
    EXISTS (SELECT 1 FROM github_installation_approvals WHERE installation_id = $1 AND organisation_id = $2 AND approved_at IS NOT NULL)`,
		installationID, conn.OrgID, connectionID).Scan(&elsewhere, &approved); err != nil {
		return store.Map(err)
	}
	if !elsewhere || approved {
		return nil
	}
	if _, err := db.Exec(ctx, `INSERT INTO github_installation_approvals (installation_id, account_login, organisation_id)
VALUES ($1, $2, $3) ON CONFLICT (installation_id, organisation_id) DO UPDATE SET account_login = EXCLUDED.account_login`,
		installationID, account, conn.OrgID); err != nil {
		return store.Map(err)
	}
	return &NeedsApprovalError{Account: account}
}

// Approval is a request to attach an installation to one more organisation
// (never its installation id: an admin knows it by account).
type Approval struct {
	ID               string     `json:"id"`
	Account          string     `json:"account"`
	OrganisationID   string     `json:"organisation_id"`
	OrganisationName string     `json:"organisation_name"`
	AttachedTo       []string   `json:"attached_to"` // the organisations whose logins hold it now, by name
	RequestedAt      time.Time  `json:"requested_at"`
	ApprovedAt       *time.Time `json:"approved_at"`
}

const approvalSelect = `SELECT a.id::text, a.account_login, a.organisation_id::text, o.name, a.requested_at, a.approved_at,
    coalesce((SELECT array_agg(DISTINCT x.name ORDER BY x.name) FROM (SELECT (` + loginOrg + `) AS org ` + loginJoins + `
        WHERE l.installation_id = a.installation_id) h JOIN organisations x ON x.id = h.org WHERE x.id <> a.organisation_id), '{}')
FROM github_installation_approvals a JOIN organisations o ON o.id = a.organisation_id`

func scanApproval(r pgx.CollectableRow) (Approval, error) {
	var a Approval
	return a, r.Scan(&a.ID, &a.Account, &a.OrganisationID, &a.OrganisationName, &a.RequestedAt, &a.ApprovedAt, &a.AttachedTo)
}

// ListApprovals lists the requests, waiting ones first, newest first.
func ListApprovals(ctx context.Context, db store.DB) ([]Approval, error) {
	rows, err := db.Query(ctx, approvalSelect+` ORDER BY a.approved_at IS NOT NULL, a.requested_at DESC`)
	if err != nil {
		return nil, store.Map(err)
	}
	out, err := pgx.CollectRows(rows, scanApproval)
	if out == nil {
		out = []Approval{}
	}
	return out, store.Map(err)
}

// Approve marks a request approved by an instance admin; store.ErrNotFound
// when there is none.
func Approve(ctx context.Context, db store.DB, id, userID string) (Approval, error) {
	tag, err := db.Exec(ctx, `UPDATE github_installation_approvals SET approved_at = coalesce(approved_at, now()), approved_by = nullif($2, '')::uuid
WHERE id::text = $1`, id, userID)
	if err != nil {
		return Approval{}, store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return Approval{}, store.ErrNotFound
	}
	rows, err := db.Query(ctx, approvalSelect+` WHERE a.id::text = $1`, id)
	if err != nil {
		return Approval{}, store.Map(err)
	}
	a, err := pgx.CollectExactlyOneRow(rows, scanApproval)
	return a, store.Map(err)
}

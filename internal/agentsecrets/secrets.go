package agentsecrets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// ErrNoKeyring: the box has no encryption key, so secrets can be neither
// stored nor opened.
var ErrNoKeyring = errors.New("the box has no encryption key (GUILDS_ENCRYPTION_KEY): agent secrets cannot be stored")

// Secret is a secret's metadata; the value is never part of it.
type Secret struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	OwnerScope Scope     `json:"owner_scope"`
	OwnerID    string    `json:"owner_id"`
	SetBy      string    `json:"set_by"`
	SetAt      time.Time `json:"set_at"`
	CreatedAt  time.Time `json:"created_at"`
	Grants     []Grant   `json:"grants"`
	Reaches    []Reach   `json:"reaches"`
	owner      Place
}

// AAD is the additional data a secret's value is sealed with: bound to its
// row, so a ciphertext copied onto another secret does not open.
func AAD(secretID string) []byte { return []byte("agent_secrets\x00" + secretID) }

// Set stores or replaces the secret name of owner, sealed, and records who
// did it. created reports a new secret.
func Set(ctx context.Context, db store.DB, kr *secret.Keyring, owner Place, name, value, actor string) (s Secret, created bool, err error) {
	var p validation.Problems
	CheckName(&p, "name", name)
	CheckValue(&p, "value", value)
	if err := p.Err(); err != nil {
		return s, false, err
	}
	if kr == nil {
		return s, false, ErrNoKeyring
	}
	var guildID, agentID *string
	if owner.Scope != ScopeOrganisation {
		guildID = &owner.GuildID
	}
	if owner.Scope == ScopeAgent {
		agentID = &owner.AgentID
	}
	id := uuid.NewString()
	ct, err := kr.Seal([]byte(value), AAD(id))
	if err != nil {
		return s, false, err
	}
	err = db.QueryRow(ctx, `INSERT INTO agent_secrets (id, owner_scope, owner_id, organisation_id, guild_id, agent_id, name,
		key_id, ciphertext, set_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (owner_scope, owner_id, name) DO NOTHING RETURNING id::text`,
		id, owner.Scope, owner.ID(), owner.OrgID, guildID, agentID, name, kr.ActiveKeyID(), ct, actor).Scan(&s.ID)
	created = err == nil
	if errors.Is(err, pgx.ErrNoRows) {
		// Replace the value of the secret already there, sealed for its own id.
		if err = db.QueryRow(ctx, `SELECT id::text FROM agent_secrets WHERE owner_scope = $1 AND owner_id = $2 AND name = $3
			FOR UPDATE`, owner.Scope, owner.ID(), name).Scan(&s.ID); err != nil {
			return s, false, store.Map(err)
		}
		if ct, err = kr.Seal([]byte(value), AAD(s.ID)); err != nil {
			return s, false, err
		}
		_, err = db.Exec(ctx, `UPDATE agent_secrets SET key_id = $2, ciphertext = $3, set_by = $4, set_at = now() WHERE id = $1`,
			s.ID, kr.ActiveKeyID(), ct, actor)
	}
	if err != nil {
		return s, false, store.Map(err)
	}
	action := "replace"
	if created {
		action = "set"
	}
	if err := recordChange(ctx, db, owner, s.ID, name, action, actor, nil); err != nil {
		return s, false, err
	}
	s, err = Get(ctx, db, owner, name)
	return s, created, err
}

// Delete removes the secret name of owner; store.ErrNotFound when absent.
func Delete(ctx context.Context, db store.DB, owner Place, name, actor string) error {
	var id string
	err := db.QueryRow(ctx, `DELETE FROM agent_secrets WHERE owner_scope = $1 AND owner_id = $2 AND name = $3 RETURNING id::text`,
		owner.Scope, owner.ID(), name).Scan(&id)
	if err != nil {
		return store.Map(err)
	}
	return recordChange(ctx, db, owner, id, name, "delete", actor, nil)
}

// Get returns one secret's metadata, with its grant rows and the agents it reaches.
func Get(ctx context.Context, db store.DB, owner Place, name string) (Secret, error) {
	list, err := list(ctx, db, owner, name)
	if err != nil {
		return Secret{}, err
	}
	if len(list) == 0 {
		return Secret{}, store.ErrNotFound
	}
	return list[0], nil
}

// List returns the secrets owned at owner, by name.
func List(ctx context.Context, db store.DB, owner Place) ([]Secret, error) {
	return list(ctx, db, owner, "")
}

func list(ctx context.Context, db store.DB, owner Place, name string) ([]Secret, error) {
	rows, err := db.Query(ctx, `SELECT id::text, name, owner_scope, owner_id::text, set_by, set_at, created_at
		FROM agent_secrets WHERE owner_scope = $1 AND owner_id = $2 AND ($3 = '' OR name = $3) ORDER BY name`,
		owner.Scope, owner.ID(), name)
	if err != nil {
		return nil, store.Map(err)
	}
	out := []Secret{}
	for rows.Next() {
		var s Secret
		if err := rows.Scan(&s.ID, &s.Name, &s.OwnerScope, &s.OwnerID, &s.SetBy, &s.SetAt, &s.CreatedAt); err != nil {
			rows.Close()
			return nil, store.Map(err)
		}
		s.owner = owner
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, store.Map(err)
	}
	if err := describeReach(ctx, db, owner, out); err != nil {
		return nil, err
	}
	return out, nil
}

// open decrypts one secret's value.
func open(kr *secret.Keyring, id string, ct []byte) (string, error) {
	if kr == nil {
		return "", ErrNoKeyring
	}
	pt, err := kr.Open(ct, AAD(id))
	if err != nil {
		return "", fmt.Errorf("open agent secret %s: %w", id, err)
	}
	return string(pt), nil
}

// Package records holds collections, the typed tables operators define for
// an organisation or one of its guilds, their grants, and the records the
// five record tools read and write.
package records

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Collection is one typed table.
type Collection struct {
	ID             string    `json:"id"`
	OrganisationID string    `json:"organisation_id"`
	GuildID        *string   `json:"guild_id"` // nil: an organisation table
	Name           string    `json:"name"`
	Description    string    `json:"description"`
	Columns        []Column  `json:"columns"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Unique returns the unique column, if any.
func (c Collection) Unique() (Column, bool) {
	for _, col := range c.Columns {
		if col.Unique {
			return col, true
		}
	}
	return Column{}, false
}

// CollectionInput defines or alters a collection; nil fields are kept.
// Columns, when given, is the whole new column list.
type CollectionInput struct {
	Name        *string   `json:"name"`
	Description *string   `json:"description"`
	GuildID     *string   `json:"guild_id"` // on create only: the owning guild
	Columns     *[]Column `json:"columns"`
}

const collCols = `id, organisation_id, guild_id, name, description, columns, created_at, updated_at`

func scanCollection(row interface{ Scan(...any) error }) (Collection, error) {
	var c Collection
	var cols []byte
	err := row.Scan(&c.ID, &c.OrganisationID, &c.GuildID, &c.Name, &c.Description, &cols, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return c, store.Map(err)
	}
	err = json.Unmarshal(cols, &c.Columns)
	return c, err
}

func checkCollection(in CollectionInput, create bool) error {
	var p validation.Problems
	if in.Name != nil || create {
		p.Check(in.Name != nil && namePattern.MatchString(*in.Name), "name", "must start with a lower-case letter and hold only lower-case letters, digits and _ (at most 63 characters), like customers or open_orders")
	}
	if in.Description != nil {
		p.Check(len(*in.Description) <= 2000, "description", "must be at most 2000 bytes")
	}
	if in.Columns != nil {
		CheckColumns(&p, *in.Columns)
	} else if create {
		p.Add("columns", "is required: declare at least one column")
	}
	if in.Columns != nil && len(*in.Columns) == 0 {
		p.Add("columns", "declare at least one column")
	}
	return p.Err()
}

// CreateCollection defines a collection in an organisation (or one of its
// guilds when in.GuildID is set). Visibility of the organisation is the
// caller's check.
func CreateCollection(ctx context.Context, db store.DB, orgID string, in CollectionInput) (Collection, error) {
	if err := checkCollection(in, true); err != nil {
		return Collection{}, err
	}
	if in.GuildID != nil {
		var ok bool
		err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM guilds WHERE id = $1 AND organisation_id = $2)`, *in.GuildID, orgID).Scan(&ok)
		if err = store.Map(err); err != nil && !errors.Is(err, store.ErrNotFound) {
			return Collection{}, err
		}
		if !ok {
			var p validation.Problems
			p.Add("guild_id", "is not a guild of this organisation")
			return Collection{}, p.Err()
		}
	}
	cols, _ := json.Marshal(*in.Columns)
	desc := ""
	if in.Description != nil {
		desc = *in.Description
	}
	return scanCollection(db.QueryRow(ctx, `INSERT INTO collections (organisation_id, guild_id, name, description, columns)
		VALUES ($1, $2, $3, $4, $5) RETURNING `+collCols, orgID, in.GuildID, *in.Name, desc, cols))
}

// ListCollections lists the collections of an organisation by name.
func ListCollections(ctx context.Context, db store.DB, orgID string) ([]Collection, error) {
	rows, err := db.Query(ctx, `SELECT `+collCols+` FROM collections WHERE organisation_id = $1 ORDER BY name`, orgID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Collection{}
	for rows.Next() {
		c, err := scanCollection(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// GetCollection reads a collection by id; store.ErrNotFound when absent.
func GetCollection(ctx context.Context, db store.DB, id string) (Collection, error) {
	return scanCollection(db.QueryRow(ctx, `SELECT `+collCols+` FROM collections WHERE id = $1`, id))
}

// CollectionByName reads a collection of an organisation by name.
func CollectionByName(ctx context.Context, db store.DB, orgID, name string) (Collection, error) {
	return scanCollection(db.QueryRow(ctx, `SELECT `+collCols+` FROM collections WHERE organisation_id = $1 AND name = $2`, orgID, name))
}

// UpdateCollection renames, describes or re-declares a collection. A new
// column list is checked against every live record: a dropped column's
// values are removed, and a new required column, a changed type or a new
// unique column that the stored values do not satisfy refuse the change
// (422, every problem listed).
func UpdateCollection(ctx context.Context, db store.DB, id string, in CollectionInput) (Collection, error) {
	if in.GuildID != nil {
		var p validation.Problems
		p.Add("guild_id", "cannot change: a collection stays with its owner")
		return Collection{}, p.Err()
	}
	if err := checkCollection(in, false); err != nil {
		return Collection{}, err
	}
	cur, err := scanCollection(db.QueryRow(ctx, `SELECT `+collCols+` FROM collections WHERE id = $1 FOR UPDATE`, id))
	if err != nil {
		return Collection{}, err
	}
	if in.Columns != nil {
		if err := rewriteRecords(ctx, db, cur, *in.Columns); err != nil {
			return Collection{}, err
		}
		cols, _ := json.Marshal(*in.Columns)
		if _, err := db.Exec(ctx, `UPDATE collections SET columns = $2 WHERE id = $1`, id, cols); err != nil {
			return Collection{}, store.Map(err)
		}
	}
	return scanCollection(db.QueryRow(ctx, `UPDATE collections SET name = coalesce($2, name),
		description = coalesce($3, description), updated_at = now() WHERE id = $1 RETURNING `+collCols,
		id, in.Name, in.Description))
}

// rewriteRecords re-validates every live record under cols and rewrites its
// stored form; it fails without writing when any record does not fit.
func rewriteRecords(ctx context.Context, db store.DB, c Collection, cols []Column) error {
	rows, err := db.Query(ctx, `SELECT id, data FROM records WHERE collection_id = $1 AND deleted_at IS NULL ORDER BY id`, c.ID)
	if err != nil {
		return store.Map(err)
	}
	type rewrite struct {
		id     string
		data   map[string]any
		text   string
		unique *string
	}
	var out []rewrite
	var p validation.Problems
	seen := map[string]string{}
	for rows.Next() {
		var rid string
		var raw map[string]json.RawMessage
		if err := rows.Scan(&rid, &raw); err != nil {
			rows.Close()
			return err
		}
		data := map[string]any{}
		var uk *string
		for _, col := range cols {
			v, ok := raw[col.Name]
			if !ok || string(v) == "null" {
				if col.Required {
					p.Add("columns", "record %s has no value for required column %q", rid, col.Name)
				}
				continue
			}
			nv, msg := normalize(col, v)
			if msg != "" {
				p.Add("columns", "record %s: %s %s", rid, col.Name, msg)
				continue
			}
			data[col.Name] = nv
			if col.Unique {
				k := uniqueKey(col, nv)
				if other, dup := seen[k]; dup {
					p.Add("columns", "records %s and %s share the value %s of unique column %q", other, rid, v, col.Name)
				}
				seen[k] = rid
				uk = &k
			}
		}
		out = append(out, rewrite{id: rid, data: data, text: searchText(cols, data), unique: uk})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if err := p.Err(); err != nil {
		return err
	}
	for _, r := range out {
		b, _ := json.Marshal(r.data)
		if _, err := db.Exec(ctx, `UPDATE records SET data = $2, search_text = $3, unique_key = $4 WHERE id = $1`,
			r.id, b, r.text, r.unique); err != nil {
			return store.Map(err)
		}
	}
	return nil
}

// DeleteCollection removes a collection with its records and grants.
func DeleteCollection(ctx context.Context, db store.DB, id string) error {
	tag, err := db.Exec(ctx, `DELETE FROM collections WHERE id = $1`, id)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// notFound is the refusal for a collection the agent may not see.
func notFound(name string) error {
	return artifacts.Errorf(http.StatusNotFound, "collection %q not found", strings.TrimSpace(name))
}

package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Record is one row of a collection as tools and the API return it.
type Record struct {
	Collection string          `json:"collection"`
	ID         string          `json:"id"`
	Values     json.RawMessage `json:"values"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

const recCols = `r.id, r.data, r.created_at, r.updated_at`

func scanRecord(row interface{ Scan(...any) error }, collection string) (Record, error) {
	r := Record{Collection: collection}
	var data []byte
	err := row.Scan(&r.ID, &data, &r.CreatedAt, &r.UpdatedAt)
	r.Values = json.RawMessage(data)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r, err
}

// Body is a record body: column name to JSON value (null clears on update).
type Body map[string]json.RawMessage

// rejected lists every problem of a body as one 422; each problem reads
// "column: what is wrong".
func rejected(problems []string) error {
	sort.Strings(problems)
	e := artifacts.Errorf(http.StatusUnprocessableEntity, "record rejected: %s", strings.Join(problems, "; "))
	for _, p := range problems {
		field, msg, _ := strings.Cut(p, ": ")
		e.Problems = append(e.Problems, validation.Problem{Field: field, Message: msg})
	}
	return e
}

// check validates body against c's columns. With partial (an update) absent
// columns are fine and null clears an optional column; otherwise every
// required column needs a value. It returns the values to set and the
// columns to clear.
func check(c Collection, body Body, partial bool) (set map[string]any, clear []string, err error) {
	var problems []string
	set = map[string]any{}
	for name, raw := range body {
		col, ok := column(c.Columns, name)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: not a column of %q (columns: %s)", name, c.Name, columnNames(c.Columns)))
			continue
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			if col.Required {
				problems = append(problems, fmt.Sprintf("%s: required, cannot be null", name))
			} else {
				clear = append(clear, name)
			}
			continue
		}
		v, msg := normalize(col, raw)
		if msg != "" {
			problems = append(problems, name+": "+msg)
			continue
		}
		if col.Required && isBlank(v) {
			problems = append(problems, name+": required, cannot be empty")
			continue
		}
		set[name] = v
	}
	if !partial {
		for _, col := range c.Columns {
			if _, ok := set[col.Name]; !ok && col.Required && body[col.Name] == nil {
				problems = append(problems, col.Name+": required")
			}
		}
	}
	if len(problems) > 0 {
		return nil, nil, rejected(problems)
	}
	return set, clear, nil
}

func isBlank(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x) == ""
	case []string:
		return len(x) == 0
	}
	return false
}

func columnNames(cols []Column) string {
	n := make([]string, len(cols))
	for i, c := range cols {
		n[i] = c.Name
	}
	return strings.Join(n, ", ")
}

// decode reads stored values keeping numbers exact.
func decode(raw []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	m := map[string]any{}
	return m, d.Decode(&m)
}

// stored computes the derived columns of a record's values.
func stored(c Collection, data map[string]any) (raw []byte, text string, unique *string) {
	raw, _ = json.Marshal(data)
	if col, ok := c.Unique(); ok {
		if v, ok := data[col.Name]; ok {
			k := uniqueKey(col, v)
			unique = &k
		}
	}
	return raw, searchText(c.Columns, data), unique
}

// Added is the outcome of Add: the record, and the id it merged into when
// the unique column matched a live record.
type Added struct {
	Record     Record
	MergedInto string
}

// Add validates body and inserts a record, or merges it into the live record
// holding the same unique value.
func Add(ctx context.Context, db store.DB, c Collection, body Body) (Added, error) {
	set, _, err := check(c, body, false)
	if err != nil {
		return Added{}, err
	}
	raw, text, unique := stored(c, set)
	if unique != nil {
		// Lock the existing holder of the value, if any, and merge into it.
		var id string
		var cur []byte
		err := db.QueryRow(ctx, `SELECT id, data FROM records WHERE collection_id = $1 AND unique_key = $2
			AND deleted_at IS NULL FOR UPDATE`, c.ID, *unique).Scan(&id, &cur)
		if err == nil {
			rec, err := merge(ctx, db, c, id, cur, set, nil)
			return Added{Record: rec, MergedInto: id}, err
		}
		if !errors.Is(store.Map(err), store.ErrNotFound) {
			return Added{}, store.Map(err)
		}
	}
	rec, err := scanRecord(db.QueryRow(ctx, `INSERT INTO records AS r (collection_id, data, search_text, unique_key)
		VALUES ($1, $2, $3, $4) RETURNING `+recCols, c.ID, raw, text, unique), c.Name)
	if errors.Is(store.Map(err), store.ErrConflict) {
		return Added{}, artifacts.Errorf(http.StatusConflict, "another record of %q was just added with the same unique value; retry to merge into it", c.Name)
	}
	return Added{Record: rec}, store.Map(err)
}

func merge(ctx context.Context, db store.DB, c Collection, id string, cur []byte, set map[string]any, clear []string) (Record, error) {
	data, err := decode(cur)
	if err != nil {
		return Record{}, err
	}
	for k, v := range set {
		data[k] = v
	}
	for _, k := range clear {
		delete(data, k)
	}
	raw, text, unique := stored(c, data)
	rec, err := scanRecord(db.QueryRow(ctx, `UPDATE records r SET data = $2, search_text = $3, unique_key = $4, updated_at = now()
		WHERE id = $1 RETURNING `+recCols, id, raw, text, unique), c.Name)
	if errors.Is(store.Map(err), store.ErrConflict) {
		col, _ := c.Unique()
		return Record{}, artifacts.Errorf(http.StatusConflict, "another live record of %q already holds that %s", c.Name, col.Name)
	}
	return rec, store.Map(err)
}

// Updated is the outcome of Update.
type Updated struct {
	Record   Record   `json:"record"`
	Warnings []string `json:"warnings,omitempty"`
}

// Update changes the given columns of a live record.
func Update(ctx context.Context, db store.DB, c Collection, id string, body Body) (Updated, error) {
	if len(body) == 0 {
		return Updated{}, rejected([]string{"body: give at least one column to change"})
	}
	set, clear, err := check(c, body, true)
	if err != nil {
		return Updated{}, err
	}
	var cur []byte
	err = db.QueryRow(ctx, `SELECT data FROM records WHERE id = $1 AND collection_id = $2 AND deleted_at IS NULL FOR UPDATE`,
		id, c.ID).Scan(&cur)
	if err != nil {
		if errors.Is(store.Map(err), store.ErrNotFound) {
			return Updated{}, artifacts.Errorf(http.StatusNotFound, "record %s not found in collection %q", id, c.Name)
		}
		return Updated{}, store.Map(err)
	}
	var warnings []string
	old, _ := decode(cur)
	for k, v := range set {
		b, _ := json.Marshal(v)
		ob, _ := json.Marshal(old[k])
		if _, had := old[k]; had && bytes.Equal(b, ob) {
			warnings = append(warnings, fmt.Sprintf("%s already had this value", k))
		}
	}
	for _, k := range clear {
		if _, had := old[k]; !had {
			warnings = append(warnings, fmt.Sprintf("%s was already empty", k))
		}
	}
	sort.Strings(warnings)
	rec, err := merge(ctx, db, c, id, cur, set, clear)
	return Updated{Record: rec, Warnings: warnings}, err
}

// Remove soft-deletes a live record.
func Remove(ctx context.Context, db store.DB, c Collection, id string) error {
	tag, err := db.Exec(ctx, `UPDATE records SET deleted_at = now(), updated_at = now()
		WHERE id = $1 AND collection_id = $2 AND deleted_at IS NULL`, id, c.ID)
	if err != nil {
		if errors.Is(store.Map(err), store.ErrNotFound) { // malformed id
			return artifacts.Errorf(http.StatusNotFound, "record %s not found in collection %q", id, c.Name)
		}
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return artifacts.Errorf(http.StatusNotFound, "record %s not found in collection %q", id, c.Name)
	}
	return nil
}

// Get reads one live record.
func Get(ctx context.Context, db store.DB, c Collection, id string) (Record, error) {
	rec, err := scanRecord(db.QueryRow(ctx, `SELECT `+recCols+` FROM records r
		WHERE r.id = $1 AND r.collection_id = $2 AND r.deleted_at IS NULL`, id, c.ID), c.Name)
	if errors.Is(store.Map(err), store.ErrNotFound) {
		return rec, artifacts.Errorf(http.StatusNotFound, "record %s not found in collection %q", id, c.Name)
	}
	return rec, store.Map(err)
}

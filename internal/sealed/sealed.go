// Package sealed knows where the platform keeps values sealed with the
// keyring, so that `guilds keys rotate` re-seals them all and start-up can
// name the key ids the keyring lacks. Each owner of sealed values declares
// its own Set (its table and how a value's additional data is built); main
// registers them all on one Registry.
package sealed

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/secret"
)

// Set is one place sealed values are kept: a table with a key_id column
// (Table), or values inside another column (the catalog's client secrets).
type Set interface {
	// Name names the set in reports: its table, or table and column.
	Name() string
	// Rotate re-seals every value of the set not under kr's active key, in
	// batches of batch rows where the set allows, and counts what it did.
	Rotate(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, batch int, log *slog.Logger) (Rotation, error)
	// KeyIDs counts the set's sealed values per key id.
	KeyIDs(ctx context.Context, db *pgxpool.Pool) (map[string]int, error)
}

// Rotation is what a rotation did to one set.
type Rotation struct {
	Table    string
	Resealed int // values re-sealed under the active key by this run
	Current  int // values already under the active key before it
	// Remaining counts values still under another key when the run ended:
	// under a key the keyring lacks (Unknown) or in rows locked by a refresh
	// throughout. Rotation is complete only when every set has none.
	Remaining int
	Unknown   map[string]int // values per key id missing from the keyring
}

// Stats is what one rotation of every registered set did.
type Stats struct {
	Tables []Rotation
}

// Complete reports whether every sealed value is under the active key.
func (s Stats) Complete() bool {
	for _, t := range s.Tables {
		if t.Remaining > 0 {
			return false
		}
	}
	return true
}

// Resealed counts the values re-sealed in every set.
func (s Stats) Resealed() int {
	n := 0
	for _, t := range s.Tables {
		n += t.Resealed
	}
	return n
}

// Of returns the rotation of the named set (zero when it is not in s).
func (s Stats) Of(name string) Rotation {
	for _, t := range s.Tables {
		if t.Table == name {
			return t
		}
	}
	return Rotation{}
}

// KeyUse is how many values of a set are sealed under one key id.
type KeyUse struct {
	Table string
	KeyID string
	Rows  int
}

// Registry holds every set of sealed values of the platform, in the order
// they were registered.
type Registry struct {
	sets  []Set
	names map[string]bool
}

// NewRegistry returns a registry holding sets.
func NewRegistry(sets ...Set) *Registry {
	r := &Registry{names: map[string]bool{}}
	r.Register(sets...)
	return r
}

// Register adds sets. A name registered twice is a programming error: it panics.
func (r *Registry) Register(sets ...Set) {
	for _, s := range sets {
		if r.names[s.Name()] {
			panic(fmt.Sprintf("sealed: %s registered twice", s.Name()))
		}
		r.names[s.Name()] = true
		r.sets = append(r.sets, s)
	}
}

// Names lists the registered sets' names in order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.sets))
	for i, s := range r.sets {
		out[i] = s.Name()
	}
	return out
}

// Rotate re-seals every value of every registered set not under the
// keyring's active key. Both old and new keys must be in the keyring while it
// runs; values under a key it lacks are counted, not touched. Safe to run
// again. The error is nil when the work ran: check Complete.
func (r *Registry) Rotate(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, batch int, log *slog.Logger) (Stats, error) {
	if batch <= 0 {
		batch = 100
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var st Stats
	for _, s := range r.sets {
		tr, err := s.Rotate(ctx, db, kr, batch, log)
		tr.Table = s.Name()
		st.Tables = append(st.Tables, tr)
		if err != nil {
			return st, fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	return st, nil
}

// UnknownKeyIDs lists the key ids found in every registered set that the
// keyring lacks: values that cannot be opened until the key is put back.
func (r *Registry) UnknownKeyIDs(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring) ([]KeyUse, error) {
	var out []KeyUse
	for _, s := range r.sets {
		counts, err := s.KeyIDs(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name(), err)
		}
		for id, n := range counts {
			if !kr.Has(id) {
				out = append(out, KeyUse{Table: s.Name(), KeyID: id, Rows: n})
			}
		}
	}
	return out, nil
}

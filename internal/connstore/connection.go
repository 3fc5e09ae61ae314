// Package connstore is the mcp_connections table: the one Connection row
// type, its typed id and Status, and every query that reads or writes the
// table. It depends on nothing above internal/store and internal/catalog, so
// that the connectors engine, grants, the MCP pool and the adapter host use
// it while the connect service (internal/connections) uses them; it sits
// beside the service, not under it, since those layers are below the service
// (docs/adr/0623).
package connstore

import (
	"database/sql/driver"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/store"
)

// ID is a login's id (mcp_connections.id).
type ID uuid.UUID

// ParseID reads a login id; a malformed one names no login (store.ErrNotFound).
func ParseID(s string) (ID, error) {
	u, err := uuid.Parse(s)
	if err != nil {
		return ID{}, store.ErrNotFound
	}
	return ID(u), nil
}

// UUID is the id as a uuid.UUID.
func (id ID) UUID() uuid.UUID { return uuid.UUID(id) }

func (id ID) String() string { return uuid.UUID(id).String() }

// IsZero reports the zero id.
func (id ID) IsZero() bool { return id == ID{} }

// Value lets an ID be a query argument.
func (id ID) Value() (driver.Value, error) { return id.String(), nil }

// MarshalText writes the id in its canonical form.
func (id ID) MarshalText() ([]byte, error) { return uuid.UUID(id).MarshalText() }

// UnmarshalText reads an id.
func (id *ID) UnmarshalText(b []byte) error { return (*uuid.UUID)(id).UnmarshalText(b) }

// Status is a login's status (the status column).
type Status string

// Login statuses.
const (
	// StatusPending: created, no login completed yet.
	StatusPending Status = "pending"
	// StatusConnected: a checked credential is stored.
	StatusConnected Status = "connected"
	// StatusDisconnected: the login no longer works (wiped, or refused).
	StatusDisconnected Status = "disconnected"
)

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusConnected, StatusDisconnected:
		return true
	}
	return false
}

// Server is the catalog row a login belongs to, as a connection reads it.
type Server struct {
	ID        uuid.UUID
	Slug      string
	Name      string
	Kind      catalog.Kind
	Transport string // http, sse or stdio
	URL       string
	Auth      catalog.Auth
	// Config is the row's config JSON as stored (catalog.ParseConfig reads it).
	Config json.RawMessage
}

// Connection is one login of one catalog server at one owner; credentials
// never appear here.
type Connection struct {
	ID          ID
	OwnerScope  string // platform, organisation, guild or agent
	OwnerID     string // "" at the platform scope
	Status      Status
	AccountHint string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// OrgID and GuildID place the owner in the hierarchy ("" where none).
	OrgID, GuildID string
	Server         Server
}

// OwnerUUID is the owner's id, nil at the platform scope.
func (c Connection) OwnerUUID() *uuid.UUID {
	u, err := uuid.Parse(c.OwnerID)
	if err != nil {
		return nil
	}
	return &u
}

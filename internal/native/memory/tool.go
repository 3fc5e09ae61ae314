package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// ToolWrite is the name of the memory tool.
const ToolWrite = "memory_write"

// Deps are what memory_write needs.
type Deps struct {
	DB  *pgxpool.Pool
	Log *slog.Logger
}

// listing is the family's entry in the native catalog: its display group
// and what, besides bindings, decides whether a run offers its tools.
var listing = tools.Listing{Family: "memory", Group: "Memory", Gate: tools.GateBinding, Flag: "memory"}

// Register adds memory_write to reg.
func Register(reg *tools.Registry, d Deps) {
	fam := reg.Family(listing)
	fam.Register(tools.Tool{
		Name: ToolWrite,
		Description: fmt.Sprintf("Replace your whole memory with content (at most %d characters). "+
			"Your memory is shown at the start of every run; include everything you still want to remember.", MaxChars),
		Schema: json.RawMessage(`{"type":"object","properties":{
			"content":{"type":"string","description":"the complete new memory text"}},
			"required":["content"],"additionalProperties":false}`),
		Idempotent: true, Quick: true,
		Handler: func(ctx context.Context, call tools.Call) (string, error) {
			var in struct {
				Content string `json:"content"`
			}
			if err := json.Unmarshal(call.Args, &in); err != nil {
				return "", err
			}
			if call.AgentID == "" {
				return "", errors.New("memory_write needs an agent: this call has no agent id")
			}
			if err := Check(in.Content); err != nil {
				return "", err
			}
			err := store.InTx(ctx, d.DB, func(tx pgx.Tx) error {
				_, err := Write(ctx, tx, call.AgentID, in.Content)
				return err
			})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("memory saved (%d characters)", utf8.RuneCountInString(in.Content)), nil
		},
	})
}

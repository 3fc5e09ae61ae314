package pinnedprices

import (
	"context"

	"github.com/guilds/guilds/internal/store"
)

// Coins lists a login's pinned coins in their order.
func Coins(ctx context.Context, db store.DB, connectionID string) ([]Coin, error) {
	rows, err := db.Query(ctx, `SELECT coin_id, symbol, name FROM pinned_coins WHERE connection_id = $1 ORDER BY position`, connectionID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Coin{}
	for rows.Next() {
		var c Coin
		if err := rows.Scan(&c.ID, &c.Symbol, &c.Name); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, store.Map(rows.Err())
}

// ReplaceCoins makes coins the login's whole list, in the given order. The
// caller has checked them (ValidateCoins, then Quote); run it in a
// transaction so the list is never seen half written.
func ReplaceCoins(ctx context.Context, db store.DB, connectionID string, coins []Coin) error {
	if _, err := db.Exec(ctx, `DELETE FROM pinned_coins WHERE connection_id = $1`, connectionID); err != nil {
		return store.Map(err)
	}
	for i, c := range coins {
		if _, err := db.Exec(ctx, `INSERT INTO pinned_coins (connection_id, position, coin_id, symbol, name) VALUES ($1, $2, $3, $4, $5)`,
			connectionID, i, c.ID, c.Symbol, c.Name); err != nil {
			return store.Map(err)
		}
	}
	return nil
}

package runs

import (
	"context"
	"fmt"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// App is an MCP App page a tool call of a run returned or declared
// (run_apps, docs/adr/0620), redacted with the run's set before it was kept.
type App struct {
	Seq       int
	Idx       int // its place among the call's apps, from 1
	URI       string
	MediaType string
	HTML      string
}

// AppRef is how a kept app is named in the text the model reads.
func AppRef(seq, idx int) string { return fmt.Sprintf("run app %d.%d", seq, idx) }

// SaveApp keeps an app of the call stored at seq; a retried call writing the
// same (seq, idx) keeps the first.
func SaveApp(ctx context.Context, db store.DB, runID string, a App) error {
	_, err := db.Exec(ctx, `INSERT INTO run_apps (run_id, seq, idx, uri, media_type, html) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT DO NOTHING`, runID, a.Seq, a.Idx, a.URI, a.MediaType, a.HTML)
	return store.Map(err)
}

// LoadApp returns one kept app of a run (the caller checks visibility).
func LoadApp(ctx context.Context, db store.DB, runID string, seq, idx int) (App, error) {
	a := App{Seq: seq, Idx: idx}
	err := db.QueryRow(ctx, `SELECT uri, media_type, html FROM run_apps WHERE run_id = $1 AND seq = $2 AND idx = $3`,
		runID, seq, idx).Scan(&a.URI, &a.MediaType, &a.HTML)
	return a, store.Map(err)
}

// LoadImage returns one kept image of a run (the caller checks visibility).
func LoadImage(ctx context.Context, db store.DB, runID string, seq, idx int) (Image, error) {
	im := Image{Seq: seq, Idx: idx}
	err := db.QueryRow(ctx, `SELECT media_type, data FROM run_images WHERE run_id = $1 AND seq = $2 AND idx = $3`,
		runID, seq, idx).Scan(&im.MediaType, &im.Data)
	return im, store.Map(err)
}

// Media is what the operator app needs to show a kept image or app beside
// the tool result at Seq: never the bytes, which have routes of their own.
type Media struct {
	Kind      string    `json:"kind"` // "image" | "app"
	Seq       int       `json:"seq"`
	Idx       int       `json:"idx"`
	MediaType string    `json:"media_type"`
	Size      int       `json:"size"`
	URI       string    `json:"uri,omitempty"` // an app's ui:// page
	CreatedAt time.Time `json:"created_at"`
}

// MediaOf lists a run's kept images and apps by seq, then kind, then idx.
func MediaOf(ctx context.Context, db store.DB, runID string) ([]Media, error) {
	rows, err := db.Query(ctx, `
		SELECT 'image', seq, idx, media_type, octet_length(data), '', created_at FROM run_images WHERE run_id = $1
		UNION ALL
		SELECT 'app', seq, idx, media_type, octet_length(html), uri, created_at FROM run_apps WHERE run_id = $1
		ORDER BY 2, 1 DESC, 3`, runID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Media{}
	for rows.Next() {
		var m Media
		if err := rows.Scan(&m.Kind, &m.Seq, &m.Idx, &m.MediaType, &m.Size, &m.URI, &m.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

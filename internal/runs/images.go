package runs

import (
	"context"
	"fmt"

	"github.com/guilds/guilds/internal/store"
)

// Image is one image a tool call of a run returned (run_images).
type Image struct {
	Seq       int
	Idx       int // its place among the call's images, from 1
	MediaType string
	Data      []byte
}

// ImageRef is how a kept image is named in the text the model reads.
func ImageRef(seq, idx int) string { return fmt.Sprintf("run image %d.%d", seq, idx) }

// SaveImage keeps an image of the call stored at seq; a retried call
// writing the same (seq, idx) keeps the first.
func SaveImage(ctx context.Context, db store.DB, runID string, im Image) error {
	_, err := db.Exec(ctx, `INSERT INTO run_images (run_id, seq, idx, media_type, data) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT DO NOTHING`, runID, im.Seq, im.Idx, im.MediaType, im.Data)
	return store.Map(err)
}

// Images returns a run's kept images by the seq of their call, in order.
func Images(ctx context.Context, db store.DB, runID string) (map[int][]Image, error) {
	rows, err := db.Query(ctx, `SELECT seq, idx, media_type, data FROM run_images WHERE run_id = $1 ORDER BY seq, idx`, runID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := map[int][]Image{}
	for rows.Next() {
		var im Image
		if err := rows.Scan(&im.Seq, &im.Idx, &im.MediaType, &im.Data); err != nil {
			return nil, err
		}
		out[im.Seq] = append(out[im.Seq], im)
	}
	return out, rows.Err()
}

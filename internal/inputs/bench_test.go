package inputs_test

import (
	"context"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/inputs"
)

// BenchmarkAnswerToWake is an operator's answer (its transaction committed)
// to the waiting call holding it, content taken: one op asks, starts the
// wait, answers and takes. The wake rides on NOTIFY, so there is no poll
// interval in it.
func BenchmarkAnswerToWake(b *testing.B) {
	w := newWorldB(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r, err := inputs.Ask(ctx, w.db, w.atB(i+1), form)
		if err != nil {
			b.Fatal(err)
		}
		woke := make(chan error, 1)
		go func() {
			_, err := inputs.Wait(ctx, w.db, r.ID, time.Now().Add(time.Minute))
			woke <- err
		}()
		if _, err := inputs.Respond(ctx, w.db, r.ID, nil, inputs.Reply{Answer: inputs.Answer{
			Action: inputs.ActionAccept, Content: map[string]any{"copies": 2}}}); err != nil {
			b.Fatal(err)
		}
		if err := <-woke; err != nil {
			b.Fatal(err)
		}
		if _, err := inputs.Take(ctx, w.db, r.ID); err != nil {
			b.Fatal(err)
		}
	}
}

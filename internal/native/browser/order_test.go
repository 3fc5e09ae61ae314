package browser

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestATurnsCallsRunOneAtATimeInSeqOrder(t *testing.T) {
	var s sequencer
	var mu sync.Mutex
	var order []int
	inside := 0
	var wg sync.WaitGroup
	// Started last first, as concurrent activities may be.
	for _, seq := range []int{7, 6, 5, 4} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := s.acquire(context.Background(), "agent", "run", seq)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			if inside != 1 {
				t.Errorf("%d calls inside at once", inside)
			}
			order = append(order, seq)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
			release()
		}()
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
	if !slices.Equal(order, []int{4, 5, 6, 7}) {
		t.Errorf("order %v", order)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release, _ := s.acquire(context.Background(), "agent", "run", 8)
	cancel()
	if _, err := s.acquire(ctx, "agent", "run", 9); err == nil {
		t.Error("a cancelled wait returned a turn")
	}
	release()
}

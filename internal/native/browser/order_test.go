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
			release, err := s.acquire(context.Background(), "agent", "run", seq, turnOrder{})
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
	release, _ := s.acquire(context.Background(), "agent", "run", 8, turnOrder{})
	cancel()
	if _, err := s.acquire(ctx, "agent", "run", 9, turnOrder{}); err == nil {
		t.Error("a cancelled wait returned a turn")
	}
	release()
}

func TestAKnownTurnWaitsOnlyForItsEarlierBrowserCalls(t *testing.T) {
	var s sequencer
	// The first browser call of a turn starts at once.
	start := time.Now()
	release, err := s.acquire(context.Background(), "agent", "run", 3, turnOrder{known: true})
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited >= gather {
		t.Errorf("the turn's first browser call waited %s", waited)
	}
	// Its sibling at seq 5 (seq 4 was another tool) waits for it.
	got := make(chan struct{})
	go func() {
		r, err := s.acquire(context.Background(), "agent", "run", 5, turnOrder{earlier: []int{3}, known: true})
		if err == nil {
			r()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("seq 5 ran while seq 3 was running")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	<-got
	// A sibling that never arrives (refused by the budget) holds a call
	// up only for a while.
	r, err := s.acquire(context.Background(), "agent", "run", 9, turnOrder{earlier: []int{8}, known: true})
	if err != nil {
		t.Fatal(err)
	}
	r()
}

package adapters_test

import (
	"testing"

	"github.com/guilds/guilds/internal/adapters"
)

func TestTableCleansCells(t *testing.T) {
	tb := adapters.NewTable("name", "price", "note")
	price := 0.000012
	tb.Add("Bit\tcoin", &price, "line one\nline two")
	tb.Add(nil, 3, true)
	want := "name\tprice\tnote\nBit coin\t0.000012\tline one line two\n\t3\ttrue\n"
	if got := tb.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestRows(t *testing.T) {
	for in, want := range map[int]int{-1: 15, 0: 15, 1: 1, 30: 30, 31: 30, 1000: 30} {
		if got := adapters.Rows(in); got != want {
			t.Errorf("Rows(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestDownsample(t *testing.T) {
	xs := make([]int, 100)
	for i := range xs {
		xs[i] = i
	}
	got := adapters.Downsample(xs, 48)
	if len(got) != 48 || got[0] != 0 || got[47] != 99 {
		t.Fatalf("len %d, first %d, last %d", len(got), got[0], got[len(got)-1])
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("not increasing at %d: %v", i, got)
		}
	}
	if short := adapters.Downsample(xs[:10], 48); len(short) != 10 {
		t.Fatalf("a short series was cut: %d", len(short))
	}
}

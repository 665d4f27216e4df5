package budget

import (
	"context"
	"errors"
	"testing"
)

func TestFor(t *testing.T) {
	b := Limits{}.For(nil, 100<<10)
	if b.MaxInflate != 64*100<<10+1<<20 || b.MaxNodes != 100<<10+64<<10 || b.MaxTreeNodes != 8*100<<10+64<<10 || b.MaxOutput != 64*100<<10+4<<20 || b.Depth() != 64 {
		t.Errorf("100 KiB: %+v", b)
	}
	big := Limits{}.For(nil, 1<<30)
	if big.MaxInflate != InflateMax || big.MaxNodes != NodesMax || big.MaxTreeNodes != TreeNodesMax || big.MaxOutput != OutputMax {
		t.Errorf("1 GiB: ceilings not applied: %+v", big)
	}
	set := Limits{Inflate: 5, Nodes: 6, Output: 7, Depth: 8}.For(nil, 1<<20)
	if set.MaxInflate != 5 || set.MaxNodes != 6 || set.MaxTreeNodes != 6 || set.MaxOutput != 7 || set.Depth() != 8 {
		t.Errorf("set limits: %+v", set)
	}
	low := Limits{InflateMax: 10, NodesMax: 11, TreeNodesMax: 12, OutputMax: 13}.For(nil, 1<<20)
	if low.MaxInflate != 10 || low.MaxNodes != 11 || low.MaxTreeNodes != 12 || low.MaxOutput != 13 {
		t.Errorf("lower ceilings: %+v", low)
	}
	var none *Budget
	if none.Depth() != Depth || none.Err() != nil || none.Spent() != nil {
		t.Error("a nil budget")
	}
}

func TestRoomAndSpend(t *testing.T) {
	b := Limits{Inflate: 100}.For(nil, 0)
	b.AddInflated(60)
	if b.InflateRoom() != 40 {
		t.Errorf("room %d", b.InflateRoom())
	}
	b.InflateSpent()
	if b.InflateRoom() != 0 {
		t.Errorf("room after spent %d", b.InflateRoom())
	}
	err := b.Spend("limit %d reached", 100)
	if !errors.Is(err, ErrSpent) || err.Error() != "limit 100 reached" || len(b.Spent()) != 1 {
		t.Errorf("%v %v", err, b.Spent())
	}
	for range 40 {
		b.Spend("again")
	}
	if len(b.Spent()) != maxSpent {
		t.Errorf("%d messages kept", len(b.Spent()))
	}
}

func TestErrCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := Limits{}.For(ctx, 10)
	if b.Err() != nil {
		t.Fatal("not cancelled yet")
	}
	cancel()
	// Checked every 256th call: within 256 calls it is seen.
	var err error
	for i := 0; i < 256 && err == nil; i++ {
		err = b.Err()
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{"100": 100, "64K": 64 << 10, "64KiB": 64 << 10, "1.5": -1, "2m": 2 << 20, "1GiB": 1 << 30, "3 MB": 3 << 20, "x": -1, "-1": -1, "7b": 7} {
		got, err := ParseSize(in)
		if (err != nil) != (want < 0) || (err == nil && got != want) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for n, want := range map[int64]string{100: "100 bytes", 64 << 10: "64 KiB", 7441408: "7.1 MiB", 1 << 30: "1 GiB", 3 << 29: "1536 MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

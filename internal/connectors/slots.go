package connectors

import (
	"encoding/binary"

	"github.com/google/uuid"
)

// slotTable is an immutable open-addressing hash table from connection id to
// slot. Connection ids are random UUIDs, so their first eight bytes are
// already a good hash: a lookup is a mask, a 16-byte compare and rarely a
// probe, cheaper than a Go map, which hashes the key first. Inserts build a
// new table (copy on write) and swap it in atomically.
type slotTable struct {
	mask    uint64
	entries []slotEntry
	n       int
}

type slotEntry struct {
	id uuid.UUID
	s  *slot
}

func newSlotTable(size int) *slotTable {
	return &slotTable{mask: uint64(size - 1), entries: make([]slotEntry, size)} //nolint:gosec // G115: size is a positive power of two
}

func (t *slotTable) get(id uuid.UUID) *slot {
	i := binary.LittleEndian.Uint64(id[:8]) & t.mask
	for {
		e := &t.entries[i&uint64(len(t.entries)-1)] //nolint:gosec // G115: the table is never empty; the mask spares the bounds check
		if e.id == id {
			return e.s
		}
		if e.s == nil {
			return nil
		}
		i = (i + 1) & t.mask
	}
}

// with returns a copy of t holding id → s too, grown to stay at most half full.
func (t *slotTable) with(id uuid.UUID, s *slot) *slotTable {
	size := len(t.entries)
	for (t.n+1)*2 > size {
		size *= 2
	}
	out := newSlotTable(size)
	for _, e := range t.entries {
		if e.s != nil {
			out.put(e.id, e.s)
		}
	}
	out.put(id, s)
	return out
}

func (t *slotTable) put(id uuid.UUID, s *slot) {
	i := binary.LittleEndian.Uint64(id[:8]) & t.mask
	for t.entries[i].s != nil {
		i = (i + 1) & t.mask
	}
	t.entries[i] = slotEntry{id: id, s: s}
	t.n++
}

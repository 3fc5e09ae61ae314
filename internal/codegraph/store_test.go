package codegraph

import (
	"math"
	"strings"
	"testing"
)

// storeFile is a small parsed file: a class, its method, a field, a local
// and a reference to the method from inside it.
func storeFile() *File {
	return &File{
		Path: "a.py", Lang: "python", Size: 10, MTime: 1, Hash: 2,
		Defs: []Def{
			{Name: "Store", Kind: "class", Line: 1, End: 9, Parent: -1},
			{Name: "get", Kind: "method", Container: "Store", Line: 2, End: 4, Parent: 0},
		},
		Counts: []int32{1, 2},
		Fields: []Local{{Def: 0, Name: "db", Type: "DB"}},
		Locals: []Local{{Def: 1, Name: "x", Type: "Row", Guess: true}},
		Names:  []string{"get", "self"},
		Refs:   []Ref{{Name: 0, Qual: 1, Line: 3, Def: 1, Flags: refCall | refMember}},
	}
}

func encodeOne(t *testing.T, f *File) string {
	t.Helper()
	data, err := encodeStore([]*File{f})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A sound store reads back, references and locals included.
func TestStoreReadsBackAFile(t *testing.T) {
	got := decodeStore(encodeOne(t, storeFile()))
	if len(got) != 1 {
		t.Fatalf("%d files back, want 1", len(got))
	}
	want := storeFile()
	if dumpFile(got[0]) != dumpFile(want) || len(got[0].Locals) != 1 || got[0].Locals[0] != want.Locals[0] {
		t.Fatalf("differs after a round trip:\n%s\nwant\n%s", dumpFile(got[0]), dumpFile(want))
	}
}

// A store whose indices point out of their file, or whose numbers do not
// fit, is damaged: it is rejected (and the graph rebuilt), never trusted.
func TestStoreRejectsIndicesOutOfTheFile(t *testing.T) {
	damaged := func(damage func(f *File)) func(t *testing.T) string {
		return func(t *testing.T) string {
			f := storeFile()
			damage(f)
			return encodeOne(t, f)
		}
	}
	cases := map[string]func(t *testing.T) string{
		"parent is itself":   damaged(func(f *File) { f.Defs[0].Parent = 0 }),
		"parent comes after": damaged(func(f *File) { f.Defs[0].Parent = 1 }),
		"parent beyond defs": damaged(func(f *File) { f.Defs[1].Parent = 7 }),
		"field beyond defs":  damaged(func(f *File) { f.Fields[0].Def = 2 }),
		"line beyond int32":  func(t *testing.T) string { return withHugeDefNumber(t, storeFile(), false) },
		"count beyond int32": func(t *testing.T) string { return withHugeDefNumber(t, storeFile(), true) },
		"cut short":          func(t *testing.T) string { data := encodeOne(t, storeFile()); return data[:len(data)-5] },
	}
	for name, store := range cases {
		t.Run(name, func(t *testing.T) {
			if got := decodeStore(store(t)); got != nil {
				t.Fatalf("damaged store read as %d files", len(got))
			}
		})
	}
}

// withHugeDefNumber encodes f with the first definition's line (or count)
// beyond int32, as only damage can write it.
func withHugeDefNumber(t *testing.T, f *File, count bool) string {
	t.Helper()
	good := encodeOne(t, f)
	w := &writer{}
	w.str(f.Defs[0].Name)
	w.str(f.Defs[0].Kind)
	w.str(f.Defs[0].Container)
	w.str(f.Defs[0].Sig)
	prefix := string(w.buf)
	i := strings.Index(good, prefix)
	if i < 0 {
		t.Fatal("first definition not found in the store")
	}
	r := &reader{s: good[i+len(prefix):]}
	line, end, parent, n := r.uint(), r.uint(), r.uint(), r.uint()
	rest := r.s
	if count {
		n = math.MaxInt32 + 1
	} else {
		line = math.MaxUint32 + 5
	}
	w = &writer{}
	w.uint(line)
	w.uint(end)
	w.uint(parent)
	w.uint(n)
	return good[:i+len(prefix)] + string(w.buf) + rest
}

// References or locals pointing out of their file are dropped when first
// decoded: a query never indexes past the file's names or definitions.
func TestStoreDropsReferencesOutOfTheFile(t *testing.T) {
	cases := map[string]func(f *File){
		"name beyond names":      func(f *File) { f.Refs[0].Name = 2 },
		"qualifier beyond names": func(f *File) { f.Refs[0].Qual = 5 },
		"definition beyond defs": func(f *File) { f.Refs[0].Def = 2 },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			f := storeFile()
			damage(f)
			got := decodeStore(encodeOne(t, f))
			if len(got) != 1 {
				t.Fatalf("%d files back, want 1", len(got))
			}
			if refs := got[0].refs(); len(refs) != 0 {
				t.Fatalf("kept damaged references %+v", refs)
			}
		})
	}
	f := storeFile()
	f.Locals[0].Def = 9
	got := decodeStore(encodeOne(t, f))
	if len(got) != 1 || got[0].refs() == nil || got[0].Locals != nil {
		t.Fatalf("a local beyond the definitions was kept: %+v", got)
	}
}

// A negative index or line has no encoding; saving such a graph fails,
// naming the field, rather than writing a number that reads back wrong.
func TestStoreRefusesNegativeNumbers(t *testing.T) {
	cases := map[string]func(f *File){
		"definition line":      func(f *File) { f.Defs[0].Line = -3 },
		"definition parent":    func(f *File) { f.Defs[0].Parent = -2 },
		"definition count":     func(f *File) { f.Counts[1] = -1 },
		"reference name":       func(f *File) { f.Refs[0].Name = -1 },
		"reference qualifier":  func(f *File) { f.Refs[0].Qual = -2 },
		"reference definition": func(f *File) { f.Refs[0].Def = math.MinInt32 },
		"local's definition":   func(f *File) { f.Locals[0].Def = -2 },
	}
	for field, damage := range cases {
		t.Run(field, func(t *testing.T) {
			f := storeFile()
			damage(f)
			_, err := encodeStore([]*File{f})
			if err == nil || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), f.Path) {
				t.Fatalf("err = %v, want one naming %s and %s", err, f.Path, field)
			}
		})
	}
}

package codegraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unsafe"
)

// storeVersion changes with the layout or with what a parse extracts
// beyond the queries (a change of a query changes queryPrint), so an old
// graph is rebuilt rather than read.
const storeVersion = 7

// queryPrint fingerprints the extraction queries and which file endings
// each language takes, so a graph stored before a language was added (its
// files kept unparsed) is rebuilt.
var queryPrint = func() uint64 {
	h := fnv.New64a()
	for _, name := range sortedKeys(languages) {
		_, _ = h.Write([]byte(name + "\n" + languages[name].query)) // a hash's Write never fails
	}
	for _, ext := range sortedKeys(extensions) {
		_, _ = h.Write([]byte(ext + "=" + extensions[ext] + "\n"))
	}
	return h.Sum64()
}()

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// storeName is the graph's file inside /home/agent/.cache/graft/<name>/.
const storeName = "graph.bin"

const storeMagic = "guilds-codegraph\n"

// The store is one file: a magic line, the version, then every file's
// fields as varints and length-prefixed strings. It is read into one
// string so every name in it is a substring of that string (a load
// allocates per file and definition, never per name), and a file's
// references stay packed until a query needs them.

type writer struct {
	buf []byte
	err error
}

func (w *writer) uint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *writer) int(v int64)   { w.buf = binary.AppendVarint(w.buf, v) }
func (w *writer) str(s string)  { w.uint(uint64(len(s))); w.buf = append(w.buf, s...) }

// nat writes an index, line or count; what field names it if it is
// negative (a graph in memory never holds one), which fails the save.
func (w *writer) nat(v int64, what string) {
	if v < 0 {
		if w.err == nil {
			w.err = fmt.Errorf("%s is negative (%d)", what, v)
		}
		return
	}
	w.uint(uint64(v))
}

type reader struct {
	s   string
	bad bool
}

func (r *reader) uint() uint64 {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if len(r.s) == 0 {
			r.bad = true
			return 0
		}
		b := r.s[0]
		r.s = r.s[1:]
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
	r.bad = true
	return 0
}

func (r *reader) int() int64 {
	u := r.uint()
	return int64(u>>1) ^ -int64(u&1)
}

// nat reads what nat wrote; a value beyond int32 marks the input damaged.
func (r *reader) nat() int32 {
	v := r.uint()
	if v > math.MaxInt32 {
		r.bad = true
		return 0
	}
	return int32(v)
}

// index reads an index written as i+1 (-1, none, as 0) and marks the
// input damaged unless -1 <= i < n.
func (r *reader) index(n int) int32 {
	i := r.nat() - 1
	if int(i) >= n {
		r.bad = true
		return -1
	}
	return i
}

func (r *reader) str() string {
	n := r.uint()
	if n > uint64(len(r.s)) {
		r.bad = true
		r.s = ""
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

// count reads a length that cannot exceed what is left of the input
// (nor int32, which indexes files and definitions).
func (r *reader) count() int {
	n := r.uint()
	if n > math.MaxInt32 || n > uint64(len(r.s)) {
		r.bad = true
		return 0
	}
	return int(n)
}

func packRefs(refs []Ref) (string, error) {
	w := &writer{buf: make([]byte, 0, len(refs)*6)}
	for _, r := range refs {
		w.nat(int64(r.Name), "reference name")
		w.nat(int64(r.Qual)+1, "reference qualifier")
		w.nat(int64(r.Line), "reference line")
		w.nat(int64(r.Def)+1, "reference definition")
		w.buf = append(w.buf, r.Flags)
	}
	return string(w.buf), w.err
}

// unpackRefs reads packed references of a file with names names and defs
// definitions; an index out of those is damage.
func unpackRefs(packed string, names, defs int) ([]Ref, error) {
	r := reader{s: packed}
	refs := make([]Ref, 0, len(packed)/6)
	for len(r.s) > 0 && !r.bad {
		var ref Ref
		ref.Name = r.nat()
		ref.Qual = r.index(names)
		ref.Line = r.nat()
		ref.Def = r.index(defs)
		if int(ref.Name) >= names {
			r.bad = true
		}
		if len(r.s) == 0 {
			return nil, errors.New("truncated references")
		}
		ref.Flags = r.s[0]
		r.s = r.s[1:]
		refs = append(refs, ref)
	}
	if r.bad {
		return nil, errors.New("damaged references")
	}
	return refs, nil
}

func packLocals(ls []Local) (string, error) {
	w := &writer{}
	for _, l := range ls {
		w.nat(int64(l.Def)+1, "local's definition")
		w.str(l.Name)
		w.str(l.Type)
		w.str(l.Pkg)
		g := uint64(l.Nth) << 1
		if l.Guess {
			g |= 1
		}
		w.uint(g)
	}
	return string(w.buf), w.err
}

// unpackLocals reads packed locals of a file with defs definitions; nil
// when they are damaged.
func unpackLocals(packed string, defs int) []Local {
	r := &reader{s: packed}
	var ls []Local
	for len(r.s) > 0 && !r.bad {
		l := Local{Def: r.index(defs), Name: r.str(), Type: r.str(), Pkg: r.str()}
		g := r.uint()
		l.Guess, l.Nth = g&1 == 1, uint8(min(g>>1, 255))
		ls = append(ls, l)
	}
	if r.bad {
		return nil
	}
	return ls
}

func encodeStore(files []*File) ([]byte, error) {
	size := 1 << 16
	for _, f := range files {
		size += len(f.packed) + len(f.packedNames) + len(f.packedLocals) + 100*len(f.Defs) + 100
	}
	w := &writer{buf: make([]byte, 0, size)}
	w.buf = append(w.buf, storeMagic...)
	w.uint(storeVersion)
	w.uint(queryPrint)
	w.uint(uint64(len(files)))
	for _, f := range files {
		w.str(f.Path)
		w.str(f.Lang)
		w.str(f.Skipped)
		w.int(f.Size)
		w.int(f.MTime)
		w.uint(f.Hash)
		w.str(f.Pkg)
		w.uint(uint64(len(f.Imports)))
		for _, im := range f.Imports {
			w.str(im.Alias)
			w.str(im.Path)
		}
		fields, err := packLocals(f.Fields)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		w.str(fields)
		w.uint(uint64(len(f.Defs)))
		for i := range f.Defs {
			d := &f.Defs[i]
			w.str(d.Name)
			w.str(d.Kind)
			w.str(d.Container)
			w.str(d.Sig)
			w.nat(int64(d.Line), "definition line")
			w.nat(int64(d.End), "definition end")
			w.nat(int64(d.Parent)+1, "definition parent")
			w.nat(int64(f.Count(i)), "definition count")
		}
		if w.err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, w.err)
		}
		packed, names, locals := f.packed, f.packedNames, f.packedLocals
		if !f.loaded { // parsed by this refresh; a loaded file keeps its packed form
			if packed, err = packRefs(f.Refs); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			names = strings.Join(f.Names, "\x00")
			if locals, err = packLocals(f.Locals); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
		}
		w.str(names)
		w.str(packed)
		w.str(locals)
	}
	return w.buf, nil
}

// decodeStore reads what encodeStore wrote; nil when the data is of
// another version or damaged anywhere it reads (a definition's parent out
// of the file, say), so the graph is rebuilt rather than trusted. A
// file's references and locals are checked when first decoded.
func decodeStore(data string) []*File {
	if !strings.HasPrefix(data, storeMagic) {
		return nil
	}
	r := &reader{s: data[len(storeMagic):]}
	if r.uint() != storeVersion || r.uint() != queryPrint {
		return nil
	}
	n := r.count()
	files := make([]*File, 0, n)
	for i := 0; i < n && !r.bad; i++ {
		f := &File{Path: r.str(), Lang: r.str(), Skipped: r.str(), Size: r.int(), MTime: r.int(), Hash: r.uint(), Pkg: r.str()}
		if ni := r.count(); ni > 0 {
			f.Imports = make([]Import, ni)
			for j := range f.Imports {
				f.Imports[j] = Import{Alias: r.str(), Path: r.str()}
			}
		}
		fields := r.str()
		nd := r.count()
		f.Defs = make([]Def, nd)
		f.Counts = make([]int32, nd)
		for j := range f.Defs {
			// A parent comes before its children, so a parent chain
			// always ends.
			f.Defs[j] = Def{Name: r.str(), Kind: r.str(), Container: r.str(), Sig: r.str(),
				Line: r.nat(), End: r.nat(), Parent: r.index(j)}
			f.Counts[j] = r.nat()
		}
		if f.Fields = unpackLocals(fields, nd); f.Fields == nil && fields != "" {
			r.bad = true
		}
		f.packedNames = r.str()
		f.packed = r.str()
		f.packedLocals = r.str()
		f.loaded = true
		files = append(files, f)
	}
	if r.bad {
		return nil
	}
	return files
}

// loadStore reads the graph saved at path; a missing, old or damaged file
// gives no files (the graph is then built anew).
func loadStore(path string) []*File {
	data, err := os.ReadFile(path) //nolint:gosec // G304: the graph's own file in its cache folder
	if err != nil {
		return nil
	}
	// The bytes are never written again: the string shares them, so every
	// name read from it is a substring, not a copy.
	return decodeStore(unsafe.String(unsafe.SliceData(data), len(data))) //nolint:gosec // G103: data is not used after this, so the string may own its bytes
}

// saveStore writes the graph atomically (a temporary file renamed over it).
func saveStore(path string, files []*File) error {
	data, err := encodeStore(files)
	if err != nil {
		return fmt.Errorf("save graph: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".graph-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name()) // the save's own error is the one to report
		return fmt.Errorf("save graph: %w", err)
	}
	return nil
}

// lockDir takes an exclusive lock on the graph folder so two calls on the
// same repository never refresh it at once.
func lockDir(dir string) (unlock func(), err error) {
	fh, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644) //nolint:gosec // G304: the lock file in the graph's cache folder
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX); err != nil {
		_ = fh.Close() // nothing was written; the lock's error is the one to report
		return nil, err
	}
	// Closing the file releases the lock; the file holds nothing, so a
	// failed Close loses nothing.
	return func() { _ = fh.Close() }, nil
}

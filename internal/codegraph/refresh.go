package codegraph

import (
	"bytes"
	"context"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// maxParseBytes: a larger file (generated or minified, as a rule) is kept
// in the graph's file list but not parsed.
const maxParseBytes = 2 << 20

// skipDirs are never walked: dependencies, build output, caches.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, "__pycache__": true,
	".venv": true, "venv": true, ".tox": true, ".mypy_cache": true, ".pytest_cache": true,
	"target": true, "dist": true, "build": true, ".next": true, ".gradle": true,
}

// Stats says what the last refresh did.
type Stats struct {
	Files     int // files listed in the working tree
	Parsed    int // files parsed by this refresh
	Removed   int // files gone from the working tree since the last one
	Unchanged int
	Built     bool // no graph was stored: this refresh built it
}

// listFiles names the repository's files, slash-separated and relative to
// root: the tracked and untracked-but-not-ignored ones when root is a git
// work tree, else a walk that skips hidden folders and skipDirs.
func listFiles(ctx context.Context, root string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		cmd := exec.CommandContext(ctx, "git", "-c", "safe.directory=*", "-c", "core.quotepath=off",
			"ls-files", "-z", "--cached", "--others", "--exclude-standard")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		if out, err := cmd.Output(); err == nil {
			seen := map[string]bool{}
			var files []string
			for _, p := range bytes.Split(out, []byte{0}) {
				s := string(p)
				if s == "" || seen[s] || skipped(s) {
					continue
				}
				seen[s] = true
				files = append(files, s)
			}
			sort.Strings(files)
			return files, nil
		}
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (skipDirs[name] || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// skipped reports a path inside a dependency folder even git lists.
func skipped(rel string) bool {
	for _, part := range strings.Split(rel, "/")[:strings.Count(rel, "/")] {
		if part == ".git" || part == "node_modules" || part == "vendor" {
			return true
		}
	}
	return false
}

func hashBytes(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b) // a hash's Write never fails
	return h.Sum64()
}

// refresh brings files (the stored graph, by path) up to the working tree
// under root: an entry whose size and mtime match is kept, one whose
// content hash matches only gets its new stat, and the rest are parsed.
func refresh(ctx context.Context, root string, old []*File) ([]*File, Stats, error) {
	var st Stats
	st.Built = old == nil
	paths, err := listFiles(ctx, root)
	if err != nil {
		return nil, st, err
	}
	byPath := make(map[string]*File, len(old))
	for _, f := range old {
		byPath[f.Path] = f
	}
	type job struct {
		i    int
		prev *File
		info os.FileInfo
	}
	out := make([]*File, len(paths))
	var jobs []job
	for i, p := range paths {
		// Lstat: a link is never followed, so one pointing out of the
		// workspace is never read.
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil || !info.Mode().IsRegular() {
			continue // listed by git but deleted, a link, or not a file
		}
		prev := byPath[p]
		if prev != nil && prev.Size == info.Size() && prev.MTime == info.ModTime().UnixNano() {
			out[i] = prev
			st.Unchanged++
			continue
		}
		jobs = append(jobs, job{i, prev, info})
	}

	workers := runtime.GOMAXPROCS(0)
	if workers > len(jobs) {
		workers = len(jobs)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ch := make(chan job)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newParser()
			defer p.close()
			for j := range ch {
				f, parsed := load(p, root, paths[j.i], j.prev, j.info)
				mu.Lock()
				out[j.i] = f
				if parsed {
					st.Parsed++
				} else if f != nil {
					st.Unchanged++
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}

	files := out[:0]
	for _, f := range out {
		if f != nil {
			files = append(files, f)
		}
	}
	st.Files = len(files)
	if !st.Built {
		kept := map[string]bool{}
		for _, f := range files {
			kept[f.Path] = true
		}
		for _, f := range old {
			if !kept[f.Path] {
				st.Removed++
			}
		}
	}
	return files, st, nil
}

// load reads one changed file; parsed is false when its content turned out
// the same as before (only the stat moved) or it is not parsed at all.
func load(p *parser, root, rel string, prev *File, info os.FileInfo) (*File, bool) {
	f := &File{Path: rel, Lang: languageOf(rel), Size: info.Size(), MTime: info.ModTime().UnixNano()}
	if f.Lang == "" {
		return f, false
	}
	if f.Size > maxParseBytes {
		f.Lang, f.Skipped = "", "larger than 2 MiB"
		return f, false
	}
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))) //nolint:gosec // G304: a file git lists in the repository, regular by Lstat (no link)
	if err != nil {
		return nil, false
	}
	f.Hash = hashBytes(src)
	if prev != nil && prev.Hash == f.Hash && prev.Lang == f.Lang {
		kept := *prev
		kept.Size, kept.MTime = f.Size, f.MTime
		return &kept, false
	}
	if err := p.parse(f, src); err != nil {
		f.Skipped = "could not be parsed: " + err.Error()
		f.Defs, f.Refs, f.Names = nil, nil, nil
	}
	return f, true
}

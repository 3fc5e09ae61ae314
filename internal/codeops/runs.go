package codeops

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// TouchRun creates this run's folder under .runs/, marks it as the most
// recently used, and trims .runs/ to the KeepRuns most recent run folders.
// It is best effort: a workspace that cannot keep logs still runs tools.
func (e *Env) TouchRun() {
	dir, err := e.RunFolder()
	if err != nil {
		return
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return
	}
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
	trimRuns(filepath.Dir(dir), KeepRuns, filepath.Base(dir))
}

// trimRuns removes the oldest run folders of runs beyond keep. Entries
// starting with "." are not run folders; keepName is never removed.
func trimRuns(runs string, keep int, keepName string) {
	entries, err := os.ReadDir(runs)
	if err != nil {
		return
	}
	type folder struct {
		name string
		mod  time.Time
	}
	var folders []folder
	for _, ent := range entries {
		if !ent.IsDir() || strings.HasPrefix(ent.Name(), ".") {
			continue
		}
		info, err := ent.Info()
		if err != nil {
			continue
		}
		folders = append(folders, folder{ent.Name(), info.ModTime()})
	}
	if len(folders) <= keep {
		return
	}
	sort.Slice(folders, func(i, j int) bool {
		if !folders[i].mod.Equal(folders[j].mod) {
			return folders[i].mod.After(folders[j].mod)
		}
		return folders[i].name > folders[j].name
	})
	for _, f := range folders[keep:] {
		if f.name != keepName {
			_ = os.RemoveAll(filepath.Join(runs, f.name))
		}
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// corpus is a tree of Python or TypeScript sources measured against a
// language server: label names it in the table (name@version), src is
// the installed folder it is copied from.
type corpus struct {
	lang  string // python, typescript
	label string
	name  string // the repository's folder under repos
	src   string
}

// parseCorpora reads name@version=/path,... for one language.
func parseCorpora(lang, spec string) ([]corpus, error) {
	var out []corpus
	for _, item := range strings.Split(spec, ",") {
		label, src, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || label == "" || src == "" {
			return nil, fmt.Errorf("-%s: %q is not name@version=/path", lang, item)
		}
		name, _, _ := strings.Cut(label, "@")
		out = append(out, corpus{lang: lang, label: label, name: lang + "_" + name, src: src})
	}
	return out, nil
}

// copyCorpus copies the sources into repos/<name>/<base of src>, so a
// Python package keeps the folder its absolute imports name; a
// TypeScript tree gets a tsconfig.json covering every file, so the
// server's project holds all callers and not only what the opened files
// import.
func copyCorpus(c corpus, repos string) (string, error) {
	root := filepath.Join(repos, c.name)
	if err := copyTree(c.src, filepath.Join(root, filepath.Base(c.src))); err != nil {
		return "", err
	}
	if c.lang == "typescript" {
		cfg := `{"compilerOptions": {"target": "es2022", "module": "esnext", "moduleResolution": "bundler",` +
			` "strict": false, "noEmit": true, "skipLibCheck": true, "experimentalDecorators": true}, "include": ["**/*.ts"]}` + "\n"
		if err := os.WriteFile(filepath.Join(root, "tsconfig.json"), []byte(cfg), 0o600); err != nil {
			return "", err
		}
	}
	return root, nil
}

// sourceFiles lists the corpus files of its language, relative to root.
func sourceFiles(root, lang string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "__pycache__" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		ok := lang == "python" && strings.HasSuffix(p, ".py") ||
			lang == "typescript" && strings.HasSuffix(p, ".ts") && !strings.HasSuffix(p, ".d.ts")
		if !d.IsDir() && ok {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

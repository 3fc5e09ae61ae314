// Package webapp holds the operator app: plain ES modules and hand-written
// CSS, embedded in the binary and served by the API beside /api. There is no
// build step; api.gen.js is generated from the route table (go generate).
package webapp

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"path"
	"strings"
)

//go:generate go run ../../cmd/guilds-apigen -o assets/api.gen.js

//go:embed assets
var assets embed.FS

// Asset is one file of the app, ready to serve.
type Asset struct {
	Type string
	Body []byte
	Gzip []byte // nil when compressing does not pay
	ETag string
}

var files = load()

func load() map[string]Asset {
	out := map[string]Asset{}
	_ = fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		a := Asset{Type: contentType(p), Body: body, ETag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		if buf.Len() < len(body) {
			a.Gzip = buf.Bytes()
		}
		out[strings.TrimPrefix(p, "assets")] = a
		return nil
	})
	return out
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Lookup finds a file by its URL path ("/app.js"); the start page is "/index.html".
func Lookup(urlPath string) (Asset, bool) {
	a, ok := files[urlPath]
	return a, ok
}

// Index is the start page, served for every path of the app.
func Index() Asset { return files["/index.html"] }

// Paths lists every file's URL path.
func Paths() []string {
	out := make([]string, 0, len(files))
	for p := range files {
		out = append(out, p)
	}
	return out
}

package browserops

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"

	"github.com/guilds/guilds/internal/browserproto"
)

// screenshotQuality is the JPEG quality of browser_screenshot.
const screenshotQuality = 80

func screenshot(ctx context.Context, s *session, _ json.RawMessage) browserproto.Response {
	if err := s.cfg.fitPage(ctx, s.page); err != nil {
		return browserproto.Errorf("screenshot: size the window: %v", err)
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := s.c.call(ctx, "Page.captureScreenshot", params{"format": "jpeg", "quality": screenshotQuality}, &shot); err != nil {
		return browserproto.Errorf("screenshot: %v", err)
	}
	img, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return browserproto.Errorf("screenshot: the browser's image: %v", err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return browserproto.Errorf("screenshot: the browser's image is not a JPEG: %v", err)
	}
	p := filepath.Join(s.cfg.Home, "screenshots", "latest.jpg")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil { //nolint:gosec // G301: the agent's own folder
		return browserproto.Errorf("screenshot: %v", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, img, 0o644); err != nil { //nolint:gosec // G306: the agent reads it
		return browserproto.Errorf("screenshot: %v", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return browserproto.Errorf("screenshot: %v", err)
	}
	var r evalResult
	var here []string
	if s.c.call(ctx, "Runtime.evaluate", params{"expression": "[location.href, document.title]", "returnByValue": true}, &r) == nil {
		_ = r.decode(&here)
	}
	of := ""
	if len(here) == 2 {
		of = " of " + here[0]
	}
	return browserproto.Response{
		Text: fmt.Sprintf("saved a %d×%d JPEG%s to %s (%d KB)", cfg.Width, cfg.Height, of, browserproto.ScreenshotPath, (len(img)+1023)/1024),
		Meta: map[string]any{"path": browserproto.ScreenshotPath, "width": cfg.Width, "height": cfg.Height, "bytes": len(img)},
	}
}

// Package deploy holds the container files; this test checks what compose
// exposes, since no container engine runs in CI.
package deploy

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type composeFile struct {
	Services map[string]struct {
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
	} `yaml:"services"`
}

// publicServices may publish on every interface: the API authenticates.
var publicServices = map[string]bool{"api": true}

func TestComposeExposesOnlyTheAPI(t *testing.T) {
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	if len(c.Services) == 0 {
		t.Fatal("compose.yaml lists no services")
	}
	for name, s := range c.Services {
		for _, p := range s.Ports {
			if !publicServices[name] && !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s publishes %q on every interface; bind it to 127.0.0.1", name, p)
			}
		}
	}
	for _, name := range []string{"api", "worker"} {
		if got := c.Services[name].Environment["GUILDS_TEMPORAL_CODEC"]; got != "encrypt" {
			t.Errorf("%s: GUILDS_TEMPORAL_CODEC = %q, want encrypt", name, got)
		}
	}
	ui := c.Services["temporal-ui"]
	if len(ui.Ports) == 0 || !strings.HasSuffix(ui.Environment["TEMPORAL_CODEC_ENDPOINT"], "/api/temporal/codec") {
		t.Errorf("temporal-ui: ports %v, TEMPORAL_CODEC_ENDPOINT %q; want it published and decoding through the API",
			ui.Ports, ui.Environment["TEMPORAL_CODEC_ENDPOINT"])
	}
}

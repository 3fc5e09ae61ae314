package process

import (
	"fmt"
	"os"
	"strings"
)

// FileVariables are the settings that may be given as NAME_FILE, a path whose
// content is the value: the encryption key and the service addresses, which
// carry passwords. Read from a file, they never sit in the environment the
// process starts with.
var FileVariables = []string{"GUILDS_ENCRYPTION_KEY", "DATABASE_URL", "REDIS_URL"}

// LoadFileVariables sets each NAME of FileVariables whose NAME_FILE is set
// from that file (one trailing line break removed). Setting both NAME and
// NAME_FILE, an unreadable file and an empty one are errors that name the
// variable and the path, never the content. The value lives in the process's
// own environment table, not in /proc/<pid>/environ.
func LoadFileVariables() error {
	for _, name := range FileVariables {
		path := os.Getenv(name + "_FILE")
		if path == "" {
			continue
		}
		if os.Getenv(name) != "" {
			return fmt.Errorf("%s and %s_FILE are both set: keep one", name, name)
		}
		b, err := os.ReadFile(path) //nolint:gosec // G304: the operator names the file (NAME_FILE); reading it is the point
		if err != nil {
			return fmt.Errorf("%s_FILE: %w", name, err)
		}
		v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%s_FILE: %s is empty", name, path)
		}
		if err := os.Setenv(name, v); err != nil {
			return fmt.Errorf("%s_FILE: %w", name, err)
		}
	}
	return nil
}

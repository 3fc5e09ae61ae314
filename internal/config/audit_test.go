package config_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/config"
)

func TestAuditRetentionDays(t *testing.T) {
	load := func(v string) (config.Config, error) {
		return config.Load(func(k string) string {
			if k == "GUILDS_AUDIT_RETENTION_DAYS" {
				return v
			}
			return ""
		})
	}
	if c, err := load(""); err != nil || c.AuditRetentionDays != config.DefaultAuditRetentionDays || c.AuditRetention().Hours() != 90*24 {
		t.Fatalf("default: %d %v", c.AuditRetentionDays, err)
	}
	if c, err := load("7"); err != nil || c.AuditRetentionDays != 7 {
		t.Fatalf("7: %d %v", c.AuditRetentionDays, err)
	}
	for _, bad := range []string{"0", "-3", "90d", "1.5", "99999"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "GUILDS_AUDIT_RETENTION_DAYS") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

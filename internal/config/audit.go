package config

import (
	"fmt"
	"strconv"
	"time"
)

// Audit retention bounds, in days.
const (
	DefaultAuditRetentionDays = 90
	maxAuditRetentionDays     = 3650
)

func loadAuditRetention(or func(name, def string) string) (int, error) {
	v := or("GUILDS_AUDIT_RETENTION_DAYS", strconv.Itoa(DefaultAuditRetentionDays))
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxAuditRetentionDays {
		return 0, fmt.Errorf("GUILDS_AUDIT_RETENTION_DAYS must be a whole number of days from 1 to %d, got %q", maxAuditRetentionDays, v)
	}
	return n, nil
}

// AuditRetention is AuditRetentionDays as a duration.
func (c Config) AuditRetention() time.Duration {
	return time.Duration(c.AuditRetentionDays) * 24 * time.Hour
}

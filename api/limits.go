package api

import "github.com/guilds/guilds/internal/config"

// maxAgentsPerOrg is the cap CreateAgent applies.
func (s *Server) maxAgentsPerOrg() int {
	if s.MaxAgentsPerOrg > 0 {
		return s.MaxAgentsPerOrg
	}
	return config.DefaultMaxAgentsPerOrg
}

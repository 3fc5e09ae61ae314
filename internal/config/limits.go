package config

// Limits caps what one organisation, or the whole box, may hold of the
// resources every tenant shares. Each cap refuses the next request with an
// error that names its variable; none is unlimited.
type Limits struct {
	// MaxAgentsPerOrg (GUILDS_MAX_AGENTS_PER_ORG) bounds the agents of one
	// organisation, counted over all its guilds.
	MaxAgentsPerOrg int
	// MaxSandboxesPerOrg (GUILDS_MAX_SANDBOXES_PER_ORG) bounds the sandboxes
	// one worker runs at once for the agents of one organisation.
	MaxSandboxesPerOrg int
	// MaxSandboxes (GUILDS_MAX_SANDBOXES) bounds the sandboxes one worker
	// runs at once, all organisations together.
	MaxSandboxes int
	// MaxProxyConnsPerAgent (GUILDS_MAX_PROXY_CONNS_PER_AGENT) bounds the
	// connections one agent holds open at once through each of the
	// worker's egress proxies (browser, git).
	MaxProxyConnsPerAgent int
	// MaxHomeGB (GUILDS_MAX_HOME_GB) bounds what one agent keeps in its
	// home volume, in GiB.
	MaxHomeGB int
}

// Limits defaults.
const (
	DefaultMaxAgentsPerOrg       = 200
	DefaultMaxSandboxesPerOrg    = 20
	DefaultMaxSandboxes          = 50
	DefaultMaxProxyConnsPerAgent = 64
	DefaultMaxHomeGB             = 10
)

func loadLimits(or func(name, def string) string) (Limits, error) {
	var l Limits
	var err error
	if l.MaxAgentsPerOrg, err = positive(or, "GUILDS_MAX_AGENTS_PER_ORG", DefaultMaxAgentsPerOrg); err != nil {
		return l, err
	}
	if l.MaxSandboxesPerOrg, err = positive(or, "GUILDS_MAX_SANDBOXES_PER_ORG", DefaultMaxSandboxesPerOrg); err != nil {
		return l, err
	}
	if l.MaxSandboxes, err = positive(or, "GUILDS_MAX_SANDBOXES", DefaultMaxSandboxes); err != nil {
		return l, err
	}
	if l.MaxProxyConnsPerAgent, err = positive(or, "GUILDS_MAX_PROXY_CONNS_PER_AGENT", DefaultMaxProxyConnsPerAgent); err != nil {
		return l, err
	}
	if l.MaxHomeGB, err = positive(or, "GUILDS_MAX_HOME_GB", DefaultMaxHomeGB); err != nil {
		return l, err
	}
	return l, nil
}

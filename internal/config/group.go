package config

// Group bounds agents answering agents in a guild's chat
// (internal/groupchat.Limits; docs/adr/0802).
type Group struct {
	RunsPerExchange        int // GUILDS_GROUP_RUNS_PER_EXCHANGE
	PostsPerRun            int // GUILDS_GROUP_POSTS_PER_RUN
	AgentMessagesPerMinute int // GUILDS_GROUP_AGENT_MESSAGES_PER_MINUTE
}

// Defaults of Group; the same as groupchat's.
const (
	DefaultGroupRunsPerExchange        = 12
	DefaultGroupPostsPerRun            = 5
	DefaultGroupAgentMessagesPerMinute = 30
)

func loadGroup(or func(name, def string) string) (Group, error) {
	var g Group
	var err error
	if g.RunsPerExchange, err = positive(or, "GUILDS_GROUP_RUNS_PER_EXCHANGE", DefaultGroupRunsPerExchange); err != nil {
		return g, err
	}
	if g.PostsPerRun, err = positive(or, "GUILDS_GROUP_POSTS_PER_RUN", DefaultGroupPostsPerRun); err != nil {
		return g, err
	}
	g.AgentMessagesPerMinute, err = positive(or, "GUILDS_GROUP_AGENT_MESSAGES_PER_MINUTE", DefaultGroupAgentMessagesPerMinute)
	return g, err
}

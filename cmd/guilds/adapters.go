package main

// The local adapters this binary ships (internal/adapters); each registers
// itself under the name catalog rows give in config.adapter.
import (
	_ "github.com/guilds/guilds/internal/adapters/alchemy"
	_ "github.com/guilds/guilds/internal/adapters/coingecko"
	_ "github.com/guilds/guilds/internal/adapters/dexpaprika"
	_ "github.com/guilds/guilds/internal/adapters/drive"
	_ "github.com/guilds/guilds/internal/adapters/gmail"
	_ "github.com/guilds/guilds/internal/adapters/pinnedprices"
	_ "github.com/guilds/guilds/internal/adapters/qonto"
	_ "github.com/guilds/guilds/internal/adapters/twitterapi"
	_ "github.com/guilds/guilds/internal/adapters/wallet"
	_ "github.com/guilds/guilds/internal/adapters/x"
)

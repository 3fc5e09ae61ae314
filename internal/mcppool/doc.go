// Package mcppool holds the platform's MCP client sessions to remote (and
// platform-run stdio) MCP servers, one per connection: agents that inherit a
// login share its session, two logins never share a session or any state.
//
// Credentials are resolved per request by the connector engine's resolver and
// injected through the transport's header function; mcp-go's own OAuth is
// never enabled. A no-auth login holding configured values (the "config"
// provider) gets them as the provider injects them: on every HTTP request
// through the resolver's transport, or in a stdio process's environment
// (docs/adr/0203-no-auth-with-config.md). A 401 gets one forced refresh and one retry (a key server:
// one retry on a fresh session); a server that rejects a fresh token or the
// key again marks the login reconnect_required. A session the
// server forgot (404 on its id) or a closed transport is re-initialised.
//
// A stdio server runs with a clean environment, in its own process group and,
// when the orchestrator is root, as another user (docs/adr/0606-stdio-isolation.md).
// Every call first checks the login's row, so a login deleted or
// disconnected on any replica is refused; the row is kept in memory while
// the pool hears connstore.Channel, on which every change to a login is
// announced, and read from Postgres otherwise (docs/adr/0627). Results and
// errors are redacted with the credential values the call injected
// (docs/adr/0204-redact-what-the-call-used.md).
//
// Listings are persisted per connection (mcp_tools) and refreshed from the
// remote server only when older than a bound (Refresh), so run starts and
// views normally read the stored list. See docs/adr/0601-mcp-session-pool.md.
package mcppool

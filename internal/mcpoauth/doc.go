// Package mcpoauth prepares OAuth logins to remote MCP servers: it discovers
// the protected-resource metadata (RFC 9728) and the authorization-server
// metadata (RFC 8414, with the OpenID Connect fallback), registers a public
// client when the catalog row has none for the redirect URI (RFC 7591), and
// writes the result into the catalog row's config in the shape the generic
// OAuth provider of internal/connectors reads. Every endpoint taken from
// remote metadata is checked by a Policy before the platform calls it.
//
// The authorization URL itself (state, S256 PKCE challenge, resource
// indicator) and the code exchange are the connector engine's work
// (connectors.Engine.BeginOAuth and CompleteOAuth): this package never holds a
// verifier or a token.
package mcpoauth

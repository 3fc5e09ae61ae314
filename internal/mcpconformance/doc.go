// Package mcpconformance is the glue that lets cmd/mcpclient drive the
// platform's own MCP stack (mcppool, mcpoauth, the connector engine) against
// the MCP conformance suite without a browser: it watches the MCP server's
// 401 and 403 challenges, prepares a catalog row for an OAuth login (with the
// fallbacks of older servers and pre-registered clients, which
// mcpoauth.Prepare does not cover; the client ID metadata document and the
// per-issuer registrations are mcpoauth.Discoverer.Client's, as for the
// platform), and completes the authorization-code flow by following the
// authorization URL itself.
//
// Production code does not import it; see docs/conformance.md.
package mcpconformance

package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/mcpoauth"
)

// ClientName is the client_name of the platform's OAuth client, in its
// client ID metadata document as in its dynamic registrations.
const ClientName = "guilds"

// oauthClientMetadataRoutes serves the platform's client ID metadata
// document (docs/adr/0612-issuer-keyed-clients-and-cimd.md): an
// authorization server that accepts such documents fetches it from the URL
// the platform sends as client_id, instead of the platform registering.
func (s *Server) oauthClientMetadataRoutes() []route {
	return []route{
		{Method: "GET", Path: mcpoauth.ClientMetadataPath, Tag: "connections", Public: true,
			Summary: "The platform's OAuth client ID metadata document: its client_id is this URL, its redirect URI the OAuth callback under PUBLIC_BASE_URL (404 when PUBLIC_BASE_URL is neither https nor loopback)",
			Reply:   mcpoauth.ClientDocument{}, Raw: s.oauthClientMetadata},
	}
}

// oauthClientMetadata answers the document for the callback URL logins use
// (callbackURL: PUBLIC_BASE_URL, else a loopback Host in development), so
// that its client_id is the URL connect sends and its redirect URI the one
// the authorization request names.
func (s *Server) oauthClientMetadata(c *gin.Context) {
	redirect, err := s.callbackURL(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	doc, ok := mcpoauth.NewClientDocument(redirect, ClientName)
	if !ok {
		writeError(c, &Error{Status: http.StatusNotFound, Code: "not_found",
			Message: "no client ID metadata document: PUBLIC_BASE_URL is neither https nor a loopback address, so logins register their client instead"})
		return
	}
	c.Header("Cache-Control", "public, max-age=3600")
	c.JSON(http.StatusOK, doc)
}

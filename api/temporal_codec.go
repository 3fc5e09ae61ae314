package api

import (
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"
	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/guilds/guilds/internal/access"
)

// CodecPath is the remote codec endpoint the Temporal UI and CLI are pointed
// at (--ui-codec-endpoint, --codec-endpoint); they append /encode or /decode.
const CodecPath = "/api/temporal/codec"

// maxCodecBody bounds a codec request: a batch of payloads, each of which
// Temporal itself caps at a few MiB.
const maxCodecBody = 16 << 20

func (s *Server) codecRoutes() []route {
	var rs []route
	for _, op := range []string{"decode", "encode"} {
		rs = append(rs,
			route{Method: "POST", Path: CodecPath + "/" + op, Tag: "temporal", Public: true,
				Summary: "Remote payload codec for the Temporal UI and CLI: " + op + " a batch of payloads (instance admin; no token when the API listens on loopback only)",
				Body:    codecPayloads{}, Reply: codecPayloads{}, Raw: s.codec(op), MaxBody: maxCodecBody},
			route{Method: "OPTIONS", Path: CodecPath + "/" + op, Tag: "temporal", Public: true,
				Summary: "CORS preflight of the codec endpoint, answered for loopback origins", Status: http.StatusNoContent,
				Raw: s.codecPreflight})
	}
	return rs
}

// codecPayloads documents the wire shape (protojson of temporal.api.common.v1.Payloads).
type codecPayloads struct {
	Payloads []struct {
		Metadata map[string]string `json:"metadata"` // base64 values
		Data     string            `json:"data"`     // base64
	} `json:"payloads"`
}

func (s *Server) codec(op string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.CodecWithoutToken {
			if e := checkLoopbackRequest(c, true); e != nil {
				writeError(c, e)
				return
			}
		}
		s.allowLoopbackOrigin(c)
		if s.Codec == nil {
			writeError(c, &Error{Status: http.StatusNotFound, Code: "codec_off",
				Message: "payload encryption is off on this box: set GUILDS_TEMPORAL_CODEC=encrypt to turn it on"})
			return
		}
		if !s.CodecWithoutToken {
			p, err := s.authenticate(c)
			if err == nil && !p.Admin {
				err = access.ErrForbidden
			}
			if err != nil {
				s.fail(c, err)
				return
			}
		}
		body, err := io.ReadAll(io.LimitReader(c.Request.Body, maxCodecBody+1))
		if err != nil {
			writeError(c, badRequest("could not read the request body"))
			return
		}
		if len(body) > maxCodecBody {
			writeError(c, &Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large",
				Message: fmt.Sprintf("request body is larger than %d bytes", maxCodecBody)})
			return
		}
		var in commonpb.Payloads
		if err := protojson.Unmarshal(body, &in); err != nil {
			writeError(c, badRequest("body must be {\"payloads\": [...]} as Temporal sends it: "+err.Error()))
			return
		}
		var out []*commonpb.Payload
		if op == "decode" {
			out, err = s.Codec.Decode(in.Payloads)
		} else {
			out, err = s.Codec.Encode(in.Payloads)
		}
		if err != nil {
			writeError(c, unprocessable(err.Error()))
			return
		}
		reply, err := protojson.Marshal(&commonpb.Payloads{Payloads: out})
		if err != nil {
			s.fail(c, err)
			return
		}
		c.Data(http.StatusOK, "application/json", reply)
	}
}

func (s *Server) codecPreflight(c *gin.Context) {
	if s.CodecWithoutToken {
		if e := checkLoopbackRequest(c, true); e != nil {
			writeError(c, e)
			return
		}
	}
	s.allowLoopbackOrigin(c)
	c.Status(http.StatusNoContent)
}

// allowLoopbackOrigin lets a Temporal UI served from loopback (the dev
// server's, on :8233) call the codec from the browser. Other origins get no
// CORS headers: a UI elsewhere cannot send the admin token anyway, and the
// CLI needs no CORS.
func (s *Server) allowLoopbackOrigin(c *gin.Context) {
	origin := c.GetHeader("Origin")
	if origin == "" || !s.CodecWithoutToken {
		return
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !loopbackHost(u.Host) {
		return
	}
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
	h.Add("Vary", "Origin")
}

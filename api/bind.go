package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// maxBody bounds every JSON request body.
const maxBody = 4 << 20

// readBody reads a request's whole body (at most limit bytes, maxBody when
// zero) into memory and then lifts the connection's read deadline: the
// server's ReadTimeout bounds receiving the request, not the handler's work.
func readBody(c *gin.Context, limit int64) error {
	if limit <= 0 {
		limit = maxBody
	}
	if c.Request.Body != nil && c.Request.Body != http.NoBody {
		body, err := io.ReadAll(io.LimitReader(c.Request.Body, limit+1))
		if err != nil {
			return badRequest("could not read the request body")
		}
		if int64(len(body)) > limit {
			return &Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large",
				Message: fmt.Sprintf("request body is larger than %d bytes", limit)}
		}
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
	}
	_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Time{})
	return nil
}

// bindJSON decodes the request body into dst, refusing unknown fields; its errors
// are 400s that name the offending field or position.
func bindJSON(c *gin.Context, dst any) error {
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, maxBody+1))
	if err != nil {
		return badRequest("could not read the request body")
	}
	if len(body) > maxBody {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large",
			Message: fmt.Sprintf("request body is larger than %d bytes", maxBody)}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("a JSON object body is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return badRequest(describeJSONError(err))
	}
	if dec.More() {
		return badRequest("malformed JSON: unexpected data after the object")
	}
	return nil
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return fmt.Sprintf("the body must be a JSON object, not %s", typ.Value)
		}
		return fmt.Sprintf("field %q must be %s, not %s", field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: the body ends too early"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "malformed JSON: " + err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int32", "int64", "float64", "float32", "uint", "uint64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "of another type"
}

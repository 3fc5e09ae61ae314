package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

var ginParam = regexp.MustCompile(`:([a-z_]+)`)

// openAPIPath turns /api/orgs/:id into /api/orgs/{id}.
func openAPIPath(p string) string { return ginParam.ReplaceAllString(p, "{$1}") }

// OpenAPI builds the document from the route table, so it cannot drift from the router.
func (s *Server) OpenAPI() map[string]any {
	paths := map[string]any{}
	for _, rt := range s.routes {
		p := openAPIPath(rt.Path)
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		status := rt.Status
		if status == 0 {
			status = http.StatusOK
		}
		success := map[string]any{"description": http.StatusText(status)}
		if rt.Reply != nil {
			success["content"] = map[string]any{"application/json": map[string]any{"schema": schemaOf(reflect.TypeOf(rt.Reply))}}
		}
		responses := map[string]any{itoa(status): success}
		errResp := map[string]any{"$ref": "#/components/responses/Error"}
		for _, code := range []int{400, 401, 403, 404, 409, 422} {
			if rt.Public && (code == 401 || code == 403) {
				continue
			}
			responses[itoa(code)] = errResp
		}
		if rt.Body != nil {
			responses["413"] = errResp
		}
		op := map[string]any{
			"summary":     rt.Summary,
			"tags":        []string{rt.Tag},
			"operationId": operationID(rt.Method, rt.Path),
			"responses":   responses,
		}
		if rt.Public {
			op["security"] = []any{}
		}
		if params := ginParam.FindAllStringSubmatch(rt.Path, -1); len(params) > 0 {
			var ps []any
			for _, m := range params {
				ps = append(ps, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
			}
			op["parameters"] = ps
		}
		if rt.Body != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": schemaOf(reflect.TypeOf(rt.Body))}}}
		}
		item[strings.ToLower(rt.Method)] = op
	}
	return map[string]any{
		"openapi":  "3.1.0",
		"info":     map[string]any{"title": "guilds operator API", "version": "1"},
		"paths":    paths,
		"security": []any{map[string]any{"bearer": []any{}}},
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
			"responses": map[string]any{"Error": map[string]any{
				"description": "An error; the body always has this shape.",
				"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
					"type": "object", "required": []string{"error"},
					"properties": map[string]any{"error": map[string]any{"type": "object", "required": []string{"code", "message"},
						"properties": map[string]any{"code": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"},
							"problems": map[string]any{"type": "array", "items": map[string]any{"type": "object"}}}}},
				}}},
			}},
		},
	}
}

func (s *Server) openapi(c *gin.Context) { c.JSON(http.StatusOK, s.OpenAPI()) }

func operationID(method, path string) string {
	parts := []string{strings.ToLower(method)}
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if seg == "" || seg == "api" {
			continue
		}
		if strings.HasPrefix(seg, ":") {
			seg = "by_" + seg[1:]
		}
		parts = append(parts, strings.NewReplacer("-", "_", ".", "_").Replace(seg))
	}
	return strings.Join(parts, "_")
}

func itoa(i int) string { return strconv.Itoa(i) }

var (
	timeType    = reflect.TypeOf(time.Time{})
	rawJSONType = reflect.TypeOf(json.RawMessage{})
)

// schemaOf derives a JSON Schema from a Go type through its json tags.
func schemaOf(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		return map[string]any{"type": "string", "format": "date-time"}
	}
	if t == rawJSONType {
		return map[string]any{} // any JSON value
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string"}
		}
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		addFields(t, props)
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{}
}

func addFields(t reflect.Type, props map[string]any) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(ft, props)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		if f.Type.Kind() == reflect.Interface {
			props[name] = map[string]any{}
		} else {
			props[name] = schemaOf(f.Type)
		}
	}
}

// Routes lists "METHOD /path" of every mounted route, in Gin syntax.
func (s *Server) Routes() []string {
	out := make([]string, len(s.routes))
	for i, rt := range s.routes {
		out[i] = rt.Method + " " + rt.Path
	}
	return out
}

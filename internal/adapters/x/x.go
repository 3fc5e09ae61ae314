// Package x is the local adapter for the X API v2: the login's bearer token
// goes in the Authorization header of every request, and each tool answers a
// compact TSV table.
package x

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/xpost"
)

// Name is the catalog's config.adapter for this service.
const Name = "x"

// checkedAccount is the public account Connect looks up to prove the token.
const checkedAccount = "X"

func init() { adapters.Register(Adapter{}) }

// Adapter implements adapters.Adapter for the X API v2.
type Adapter struct{}

func (Adapter) Name() string { return Name }

// Check looks up a well-known account. An app-only token says nothing about
// its owner, so there is no hint.
func (Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	var out userAnswer
	return "", adapters.Rejection(get(ctx, c, "/users/by/username/"+checkedAccount, nil, &out))
}

var tools = adapters.Handlers[args]{
	"search": search,
	"user":   userInfo,
	"posts":  posts,
	"post":   post,
}

// args is the union of the tools' arguments (the manifest's schemas).
type args struct {
	Query string `json:"query"`
	User  string `json:"user"`
	Post  string `json:"post"`
	Limit int    `json:"limit"`
}

func (Adapter) Call(ctx context.Context, c adapters.Conn, tool string, raw json.RawMessage) (string, error) {
	return tools.Call(ctx, c, Name, tool, raw)
}

// The service's page-size bounds: recent search takes 10 to 100 posts, a
// user timeline 5 to 100.
const (
	searchMinPage   = 10
	timelineMinPage = 5
)

func search(ctx context.Context, c adapters.Conn, in args) (string, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return "", errors.New("search: query is empty")
	}
	n := adapters.Rows(in.Limit)
	query := postQuery()
	query.Set("query", q)
	query.Set("max_results", strconv.Itoa(max(n, searchMinPage)))
	var out postsAnswer
	if err := get(ctx, c, "/tweets/search/recent", query, &out); err != nil {
		return "", err
	}
	return postTable(out.Data[:min(n, len(out.Data))], out.Includes.authors()), nil
}

func posts(ctx context.Context, c adapters.Conn, in args) (string, error) {
	id, name, err := userRef(in.User)
	if err != nil {
		return "", fmt.Errorf("posts: %w", err)
	}
	if id == "" {
		u, err := lookupUser(ctx, c, "", name, nil)
		if err != nil {
			return "", err
		}
		id = u.ID
	}
	n := adapters.Rows(in.Limit)
	query := postQuery()
	query.Set("max_results", strconv.Itoa(max(n, timelineMinPage)))
	var out postsAnswer
	if err := get(ctx, c, "/users/"+id+"/tweets", query, &out); err != nil {
		return "", err
	}
	return postTable(out.Data[:min(n, len(out.Data))], out.Includes.authors()), nil
}

func post(ctx context.Context, c adapters.Conn, in args) (string, error) {
	id, err := xpost.ID(in.Post)
	if err != nil {
		return "", fmt.Errorf("post: %w", err)
	}
	var out postAnswer
	if err := get(ctx, c, "/tweets/"+id, postQuery(), &out); err != nil {
		return "", err
	}
	if out.Data == nil {
		return "", fmt.Errorf("post %s was not found", id)
	}
	return postTable([]apiPost{*out.Data}, out.Includes.authors()), nil
}

func userInfo(ctx context.Context, c adapters.Conn, in args) (string, error) {
	id, name, err := userRef(in.User)
	if err != nil {
		return "", fmt.Errorf("user: %w", err)
	}
	u, err := lookupUser(ctx, c, id, name, url.Values{"user.fields": {profileFields}})
	if err != nil {
		return "", err
	}
	return profileTable(u), nil
}

// lookupUser reads one user by id or, when id is empty, by username.
func lookupUser(ctx context.Context, c adapters.Conn, id, name string, q url.Values) (apiUser, error) {
	path := "/users/by/username/" + name
	if id != "" {
		path = "/users/" + id
	}
	var out userAnswer
	if err := get(ctx, c, path, q, &out); err != nil {
		return apiUser{}, err
	}
	if out.Data == nil || out.Data.ID == "" {
		return apiUser{}, fmt.Errorf("user %s was not found", first(id, name))
	}
	return *out.Data, nil
}

func header(c adapters.Conn) http.Header {
	return http.Header{"Authorization": {"Bearer " + c.Cred.AccessToken}}
}

// get reads one answer. The service answers a missing post or user with a
// 200 whose body holds only "errors"; that becomes an error here.
func get(ctx context.Context, c adapters.Conn, path string, q url.Values, out interface{ failure() error }) error {
	if err := c.GetJSON(ctx, path, q, header(c), out); err != nil {
		return err
	}
	return out.failure()
}

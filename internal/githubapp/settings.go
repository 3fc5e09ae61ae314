package githubapp

import (
	"context"
	"fmt"
	"slices"
	"sort"
)

// RequiredPermissions are the App's registration: what its installations
// must grant for coding runs (contents and pull requests written, metadata read).
var RequiredPermissions = map[string]string{"contents": "write", "pull_requests": "write", "metadata": "read"}

// Settings are the App's registration as GitHub reads it back (GET /app).
// The callback URL and the setup options are not in it.
type Settings struct {
	ID          int64             `json:"id"`
	Slug        string            `json:"slug"`
	Name        string            `json:"name"`
	ClientID    string            `json:"client_id"`
	HTMLURL     string            `json:"html_url"`
	Permissions map[string]string `json:"permissions"`
	Events      []string          `json:"events"`
}

// Settings reads the App's registration with its JWT.
func (c *Client) Settings(ctx context.Context) (Settings, error) {
	jwt, err := c.AppJWT(c.now())
	if err != nil {
		return Settings{}, err
	}
	var out Settings
	err = c.get(ctx, "/app", "Bearer "+jwt, &out)
	return out, err
}

// Problem is one way the registration differs from what the box needs.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// level orders GitHub's access levels.
var level = map[string]int{"": 0, "read": 1, "write": 2, "admin": 3}

// Check compares the registration with the box's variables and needs.
func (cfg Config) Check(s Settings) []Problem {
	var out []Problem
	if s.ID != 0 && s.ID != cfg.AppID {
		out = append(out, Problem{"id", fmt.Sprintf("GitHub answers for App %d, the box is set up for %d: set %s to the App's id", s.ID, cfg.AppID, VarAppID)})
	}
	if s.Slug != cfg.Slug {
		out = append(out, Problem{"slug", fmt.Sprintf("the App's slug is %q, %s says %q: the install link would open another App", s.Slug, VarSlug, cfg.Slug)})
	}
	if s.ClientID != "" && s.ClientID != cfg.ClientID {
		out = append(out, Problem{"client_id", fmt.Sprintf("the App's client id is %q, %s says %q: user authorization would fail", s.ClientID, VarClientID, cfg.ClientID)})
	}
	names := make([]string, 0, len(RequiredPermissions))
	for k := range RequiredPermissions {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		want, got := RequiredPermissions[k], s.Permissions[k]
		switch {
		case got == "":
			out = append(out, Problem{"permissions." + k, fmt.Sprintf("the App lacks the %s permission: give it %s (Permissions & events, Repository permissions)", k, want)})
		case level[got] < level[want]:
			out = append(out, Problem{"permissions." + k, fmt.Sprintf("the App has %s %s, it needs %s", k, got, want)})
		}
	}
	extra := []string{}
	for k := range s.Permissions {
		if _, ok := RequiredPermissions[k]; !ok {
			extra = append(extra, k+" "+s.Permissions[k])
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		out = append(out, Problem{"permissions", fmt.Sprintf("the App asks for more than the box uses (%v): remove them, every installation grants them", extra)})
	}
	if len(s.Events) > 0 {
		out = append(out, Problem{"events", fmt.Sprintf("the App subscribes to webhook events %v: the box has no webhook, turn Webhook off", s.Events)})
	}
	return out
}

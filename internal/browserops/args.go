package browserops

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

type navigateArgs struct {
	URL string `json:"url"`
}

type refArgs struct {
	Ref   string `json:"ref"`
	Text  string `json:"text"`
	Value string `json:"value"`
}

type scrollArgs struct {
	Direction string `json:"direction"`
	Ref       string `json:"ref"`
}

type evalArgs struct {
	Script string `json:"script"`
}

// refPattern is a reference: e12 in the page, f1e12 in its first frame of
// another site.
var refPattern = regexp.MustCompile(`^(f[0-9]{1,3})?e[0-9]{1,12}$`)

// validators check a tool's arguments before anything runs; "" = fine.
var validators = map[string]func(json.RawMessage) string{
	ToolNavigate: func(raw json.RawMessage) string {
		var a navigateArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return "arguments: " + err.Error()
		}
		_, msg := checkURL(a.URL)
		return msg
	},
	ToolClick: func(raw json.RawMessage) string { return checkRef(raw, "") },
	ToolType:  func(raw json.RawMessage) string { return checkRef(raw, "text") },
	ToolFill:  func(raw json.RawMessage) string { return checkRef(raw, "value") },
	ToolScroll: func(raw json.RawMessage) string {
		var a scrollArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return "arguments: " + err.Error()
		}
		switch a.Direction {
		case "up", "down", "left", "right":
		default:
			return fmt.Sprintf("direction: %q is not a direction; use up, down, left or right", a.Direction)
		}
		if a.Ref != "" && !refPattern.MatchString(a.Ref) {
			return fmt.Sprintf("ref: %q is not a reference from browser_snapshot (they look like e12)", a.Ref)
		}
		return ""
	},
	ToolEval: func(raw json.RawMessage) string {
		var a evalArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return "arguments: " + err.Error()
		}
		if strings.TrimSpace(a.Script) == "" {
			return "script: empty; give the body of an async function, such as return document.title"
		}
		return ""
	},
}

func checkRef(raw json.RawMessage, field string) string {
	var a map[string]json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return "arguments: " + err.Error()
	}
	var ref string
	if err := json.Unmarshal(a["ref"], &ref); err != nil || ref == "" {
		return "ref: required, a reference from browser_snapshot such as e12"
	}
	if !refPattern.MatchString(ref) {
		return fmt.Sprintf("ref: %q is not a reference from browser_snapshot (they look like e12)", ref)
	}
	if field != "" {
		var s string
		if v, ok := a[field]; !ok || json.Unmarshal(v, &s) != nil {
			return field + ": required, a string"
		}
	}
	return ""
}

// checkURL accepts absolute http and https URLs (and about:blank).
func checkURL(raw string) (*url.URL, string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, "url: required, such as https://example.com/"
	}
	if raw == "about:blank" {
		u, _ := url.Parse(raw)
		return u, ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Sprintf("url: %q is not a valid URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return nil, fmt.Sprintf("url: %q has no scheme; write it in full, such as https://%s", raw, raw)
		}
		return nil, fmt.Sprintf("url: %q: only http and https pages can be opened, not %s:", raw, u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Sprintf("url: %q has no host", raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Sprintf("url: %q has an invalid port", raw)
		}
	}
	return u, ""
}

// refID reads a reference already validated: the frame (0 = the page,
// k = the k-th frame of another site of the last snapshot) and the
// backend node id.
func refID(ref string) (frame int, id int64) {
	if f, rest, ok := strings.Cut(strings.TrimPrefix(ref, "f"), "e"); ok && strings.HasPrefix(ref, "f") {
		frame, _ = strconv.Atoi(f)
		ref = "e" + rest
	}
	id, _ = strconv.ParseInt(strings.TrimPrefix(ref, "e"), 10, 64)
	return frame, id
}

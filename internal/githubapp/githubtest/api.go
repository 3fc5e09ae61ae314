package githubtest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/githubapp"
)

// appPermissions are what the App asks for (the spec's registration).
var appPermissions = map[string]string{"contents": "write", "pull_requests": "write", "metadata": "read"}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func message(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}

// verifyJWT checks an App JWT as GitHub does: RS256 under the App's public
// key, issued by the App id, unexpired, living at most ten minutes.
func (s *Server) verifyJWT(r *http.Request) error {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return errors.New("no bearer token")
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return errors.New("not a JWT")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iat int64  `json:"iat"`
		Exp int64  `json:"exp"`
		Iss string `json:"iss"`
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	if err := errors.Join(json.Unmarshal(hb, &header), json.Unmarshal(cb, &claims)); err != nil {
		return err
	}
	if header.Alg != "RS256" {
		return errors.New("alg " + header.Alg)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&s.Key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return err
	}
	now := time.Now().Unix()
	switch {
	case claims.Iss != strconv.FormatInt(s.AppID, 10):
		return errors.New("iss")
	case claims.Exp <= now:
		return errors.New("expired")
	case claims.Iat > now+60:
		return errors.New("issued in the future")
	case claims.Exp-claims.Iat > 600:
		return errors.New("'Expiration time' claim ('exp') is too far in the future")
	}
	return nil
}

func (s *Server) requireJWT(w http.ResponseWriter, r *http.Request) bool {
	if err := s.verifyJWT(r); err != nil {
		message(w, http.StatusUnauthorized, "A JSON web token could not be decoded ("+err.Error()+")")
		return false
	}
	return true
}

func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		message(w, http.StatusBadRequest, "bad form")
		return
	}
	s.mu.Lock()
	login, ok := s.codes[r.Form.Get("code")]
	delete(s.codes, r.Form.Get("code"))
	var tok string
	if ok && r.Form.Get("client_id") == s.ClientID && r.Form.Get("client_secret") == s.ClientSecret {
		tok = "ghu_" + randHex(18)
		s.utoks[tok] = login
	}
	s.mu.Unlock()
	if tok == "" {
		// GitHub answers a refused code with 200 and an error field.
		writeJSON(w, http.StatusOK, map[string]string{"error": "bad_verification_code",
			"error_description": "The code passed is incorrect or expired."})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"access_token": tok, "token_type": "bearer", "scope": ""})
}

// authorize is user authorization, approved at once by BrowserUser.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != s.ClientID || s.BrowserUser == "" {
		message(w, http.StatusNotFound, "Not Found")
		return
	}
	u, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		message(w, http.StatusBadRequest, "redirect_uri")
		return
	}
	back := u.Query()
	back.Set("code", s.Code(s.BrowserUser))
	if st := q.Get("state"); st != "" {
		back.Set("state", st)
	}
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound) //nolint:gosec // G710: a test fake sends the browser where the test told it, as GitHub does
}

// install is the App's install page, completed at once by BrowserUser on
// the installation Installing.
func (s *Server) install(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("slug") != s.Slug || s.CallbackURL == "" || s.BrowserUser == "" || (s.Installing == 0 && !s.OnlyRequest) {
		message(w, http.StatusNotFound, "Not Found")
		return
	}
	u, err := url.Parse(s.CallbackURL)
	if err != nil {
		message(w, http.StatusBadRequest, "callback")
		return
	}
	var q url.Values
	switch {
	case s.OnlyRequest:
		q = url.Values{"setup_action": {"request"}}
	case s.InstallWithoutCode:
		q = url.Values{"installation_id": {strconv.FormatInt(s.Installing, 10)}, "setup_action": {"install"}}
	default:
		q = url.Values{"code": {s.Code(s.BrowserUser)}, "installation_id": {strconv.FormatInt(s.Installing, 10)}, "setup_action": {"install"}}
	}
	if st := r.URL.Query().Get("state"); st != "" {
		q.Set("state", st)
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound) //nolint:gosec // G710: a test fake sends the browser to the callback the test set, as GitHub does
}

type wireInstallation struct {
	ID         int64          `json:"id"`
	Account    wireAccount    `json:"account"`
	AppID      int64          `json:"app_id"`
	AppSlug    string         `json:"app_slug"`
	TargetType string         `json:"target_type"`
	Perms      map[string]any `json:"permissions"`
}

type wireAccount struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

func (s *Server) wireInst(in *installation) wireInstallation {
	perms := map[string]any{}
	for k, v := range appPermissions {
		perms[k] = v
	}
	return wireInstallation{ID: in.id, Account: wireAccount{Login: in.account, ID: in.id * 7, Type: "Organization"},
		AppID: s.AppID, AppSlug: s.Slug, TargetType: "Organization", Perms: perms}
}

// app is GET /app: the App's registration, read with its JWT.
func (s *Server) app(w http.ResponseWriter, r *http.Request) {
	if !s.requireJWT(w, r) {
		return
	}
	s.mu.Lock()
	perms := map[string]string{}
	for k, v := range s.Permissions {
		perms[k] = v
	}
	events := append([]string{}, s.Events...)
	count := len(s.insts)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": s.AppID, "slug": s.Slug, "client_id": s.ClientID, "name": "Guilds test",
		"html_url": s.URL + "/apps/" + s.Slug, "owner": map[string]any{"login": "guilds-owner"},
		"permissions": perms, "events": events, "installations_count": count})
}

func (s *Server) appInstallations(w http.ResponseWriter, r *http.Request) {
	if !s.requireJWT(w, r) {
		return
	}
	s.mu.Lock()
	out := []wireInstallation{}
	for _, in := range s.sortedInsts() {
		if !in.removed {
			out = append(out, s.wireInst(in))
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) sortedInsts() []*installation {
	out := make([]*installation, 0, len(s.insts))
	for _, in := range s.insts {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (s *Server) appInstallation(w http.ResponseWriter, r *http.Request) {
	if !s.requireJWT(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	in := s.insts[id]
	s.mu.Unlock()
	if in == nil || in.removed {
		message(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, s.wireInst(in))
}

func (s *Server) userInstallations(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
	s.mu.Lock()
	defer s.mu.Unlock()
	login, ok := s.utoks[tok]
	if !ok {
		message(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	out := []wireInstallation{}
	for _, id := range s.users[login].insts {
		if in := s.insts[id]; in != nil && !in.removed {
			out = append(out, s.wireInst(in))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(out), "installations": out})
}

// userInstallationRepositories lists what a user reaches in one of their
// installations, with the user's permissions on each.
func (s *Server) userInstallationRepositories(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	login, ok := s.utoks[tok]
	if !ok {
		message(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	u := s.users[login]
	in := s.insts[id]
	if u == nil || in == nil || in.removed || !slices.Contains(u.insts, id) {
		message(w, http.StatusNotFound, "Not Found")
		return
	}
	out := []githubapp.Repository{}
	for _, rp := range s.wireRepos(id, nil) {
		role := "admin"
		if u.roles != nil {
			role = u.roles[rp.ID]
		}
		if role == "" {
			continue
		}
		rp.Permissions = rolePermissions(role)
		out = append(out, rp)
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(out), "repositories": out})
}

// rolePermissions are GitHub's permission flags of a role: each role has
// the ones below it.
func rolePermissions(role string) *githubapp.UserPermissions {
	order := []string{"pull", "triage", "push", "maintain", "admin"}
	n := slices.Index(order, role)
	return &githubapp.UserPermissions{Pull: n >= 0, Triage: n >= 1, Push: n >= 2, Maintain: n >= 3, Admin: n >= 4}
}

func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	if !s.requireJWT(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var req githubapp.TokenRequest
	if r.ContentLength != 0 {
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			message(w, http.StatusBadRequest, "Problems parsing JSON")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.TokenRequests = append(s.TokenRequests, TokenCall{Installation: id, Request: req})
	in := s.insts[id]
	switch {
	case in == nil || in.removed:
		message(w, http.StatusNotFound, "Not Found")
		return
	case in.suspended:
		message(w, http.StatusForbidden, "This installation has been suspended")
		return
	}
	for k, v := range req.Permissions {
		if have, ok := appPermissions[k]; !ok || (v == "write" && have != "write") {
			message(w, http.StatusUnprocessableEntity, "The permissions requested are not granted to this installation.")
			return
		}
	}
	var limited map[int64]bool
	if len(req.RepositoryIDs) > 0 || len(req.Repositories) > 0 {
		limited = map[int64]bool{}
		for _, rid := range req.RepositoryIDs {
			if rp := s.repos[rid]; rp == nil || rp.inst != id {
				message(w, http.StatusUnprocessableEntity, "There is at least one repository that does not exist or is not accessible to the parent installation.")
				return
			}
			limited[rid] = true
		}
		for _, name := range req.Repositories {
			rp := s.repoNamed(id, name)
			if rp == nil {
				message(w, http.StatusUnprocessableEntity, "There is at least one repository that does not exist or is not accessible to the parent installation.")
				return
			}
			limited[rp.id] = true
		}
	}
	tok := "ghs_" + randHex(18)
	exp := time.Now().Add(s.TokenLife).UTC().Truncate(time.Second)
	s.itoks[tok] = &instToken{inst: id, repos: limited, expires: exp}
	perms := req.Permissions
	if len(perms) == 0 {
		perms = appPermissions
	}
	out := map[string]any{"token": tok, "expires_at": exp.Format(time.RFC3339), "permissions": perms,
		"repository_selection": "all"}
	if limited != nil {
		out["repository_selection"] = "selected"
		out["repositories"] = s.wireRepos(id, limited)
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) repoNamed(inst int64, name string) *repo {
	for _, rp := range s.repos {
		if rp.inst == inst && rp.name == name {
			return rp
		}
	}
	return nil
}

func (s *Server) wireRepos(inst int64, only map[int64]bool) []githubapp.Repository {
	out := []githubapp.Repository{}
	for _, rp := range s.repos {
		if rp.inst != inst || (only != nil && !only[rp.id]) {
			continue
		}
		out = append(out, githubapp.Repository{ID: rp.id, Name: rp.name, FullName: rp.owner + "/" + rp.name,
			Owner: githubapp.Account{Login: rp.owner, ID: inst * 7}, Private: rp.private, DefaultBranch: "main",
			HTMLURL: s.URL + "/" + rp.owner + "/" + rp.name, CloneURL: s.URL + "/" + rp.owner + "/" + rp.name + ".git"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// installationToken finds a live installation token (Authorization "token …"
// or "Bearer …").
func (s *Server) installationToken(h string) (*instToken, bool) {
	tok := strings.TrimPrefix(strings.TrimPrefix(h, "token "), "Bearer ")
	t, ok := s.itoks[tok]
	if !ok || time.Now().After(t.expires) {
		return nil, false
	}
	in := s.insts[t.inst]
	return t, in != nil && !in.removed && !in.suspended
}

func (s *Server) installationRepositories(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.installationToken(r.Header.Get("Authorization"))
	if !ok {
		message(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	repos := s.wireRepos(t.inst, t.repos)
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(repos), "repositories": repos, "repository_selection": "selected"})
}

// revokeToken is DELETE /installation/token: the token in Authorization
// stops working (204); an unknown or expired one is 401.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.installationToken(r.Header.Get("Authorization")); !ok {
		message(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	tok := strings.TrimPrefix(strings.TrimPrefix(r.Header.Get("Authorization"), "token "), "Bearer ")
	delete(s.itoks, tok)
	s.Revoked = append(s.Revoked, tok)
	w.WriteHeader(http.StatusNoContent)
}

// repoAPI answers any call under /repos/{owner}/{repo}/ with the
// repository's name when an installation token reaching it authorizes it
// (401 otherwise), recording the Authorization it got.
func (s *Server) repoAPI(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.RepoAPICalls = append(s.RepoAPICalls, r.Header.Get("Authorization"))
	t, ok := s.installationToken(r.Header.Get("Authorization"))
	var rp *repo
	for _, c := range s.repos {
		if c.owner == r.PathValue("owner") && c.name == r.PathValue("repo") {
			rp = c
		}
	}
	if !ok || rp == nil || t.inst != rp.inst || t.repos != nil && !t.repos[rp.id] {
		message(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"full_name": rp.owner + "/" + rp.name, "path": r.PathValue("rest")})
}

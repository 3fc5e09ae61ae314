package githubapp

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// JWTLife is the App token's life: GitHub accepts at most ten minutes.
const JWTLife = 9 * time.Minute

// jwtSkew backdates iat, as GitHub recommends, for clock drift.
const jwtSkew = 60 * time.Second

// AppJWT signs the App's token (RS256): issued a minute in the past, expiring
// JWTLife after now, issued by the App id. It is made in the orchestrator
// only, for one round of calls, and never stored.
func (c Config) AppJWT(now time.Time) (string, error) {
	if c.Key == nil || c.AppID == 0 {
		return "", errors.New("githubapp: the App has no key or id")
	}
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, err := json.Marshal(map[string]any{
		"iat": now.Add(-jwtSkew).Unix(), "exp": now.Add(JWTLife).Unix(), "iss": strconv.FormatInt(c.AppID, 10)})
	if err != nil {
		return "", err
	}
	signing := header + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, c.Key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

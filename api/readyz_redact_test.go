package api_test

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/testdb"
)

// echoingRedis answers every command with a RESP error that quotes the
// password it was configured to expect, as some servers and proxies do.
func echoingRedis(t *testing.T, password string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if strings.HasPrefix(line, "*") { // a new command
						_, _ = io.WriteString(c, "-WRONGPASS invalid password "+password+" for user default\r\n")
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestReadyzNamesNoPassword: /readyz is public; a failing check says what
// failed without the password a server echoed.
func TestReadyzNamesNoPassword(t *testing.T) {
	t.Parallel()
	const pw = "redis-s3cret-pw"
	rdb := redis.NewClient(&redis.Options{Addr: echoingRedis(t, pw), Password: pw, MaxRetries: -1})
	defer func() { _ = rdb.Close() }()
	srv := api.New(api.Deps{DB: testdb.New(t), Redis: rdb, Log: slog.New(slog.DiscardHandler)})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || strings.Contains(string(body), pw) || !strings.Contains(string(body), "WRONGPASS") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

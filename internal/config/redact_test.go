package config

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://guilds:s3cret@db:5432/guilds?sslmode=disable", "postgres://guilds:***@db:5432/guilds?sslmode=disable"},
		{"postgresql://u:p%40ss@db/x", "postgresql://u:***@db/x"},
		{"postgres://u:p@ss/w@db/x", "postgres://u:***@db/x"},
		{"postgres://u@db/x", "postgres://u@db/x"},
		{"postgres://db/x?user=u&password=s3cret&sslmode=require", "postgres://db/x?user=u&password=***&sslmode=require"},
		{"redis://:s3cret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"},
		{"rediss://default:s3cret@cache:6380", "rediss://default:***@cache:6380"},
		{"unix://u:s3cret@/run/redis.sock", "unix://u:***@/run/redis.sock"},
		{"host=db user=u password=s3cret dbname=x", "host=db user=u password=*** dbname=x"},
		{"host=db password = s3cret", "host=db password = ***"},
		{"host=db password='s3 cr\\'et' dbname=x", "host=db password=*** dbname=x"},
		{"password=s3cret", "password=***"},
		{"host=db sslpassword=s3cret", "host=db sslpassword=***"},
		{`PostgreSQL at host=db password=s3cret is not reachable: parse "redis://:s3cret@h:x/0": invalid port`,
			`PostgreSQL at host=db password=*** is not reachable: parse "redis://:***@h:x/0": invalid port`},
		{"postgres://postgres@127.0.0.1:5432/guilds", "postgres://postgres@127.0.0.1:5432/guilds"},
		{"127.0.0.1:6379", "127.0.0.1:6379"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactWithHidesEchoedSecrets(t *testing.T) {
	got := RedactWith("ERR invalid password hunter2 for user default", "hunter2", "")
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "ERR invalid password") {
		t.Fatal(got)
	}
}

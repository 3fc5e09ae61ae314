package codegraph

import "testing"

func TestGoShape(t *testing.T) {
	for _, c := range []struct{ sig, name, want string }{
		{"func (c *Conn) Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error)", "Exec", "Context,string,...any|CommandTag,error"},
		{"Exec(ctx context.Context, sql string, arguments ...any) (commandTag pgconn.CommandTag, err error)", "Exec", "Context,string,...any|CommandTag,error"},
		{"func (r *Rows) Scan(dest ...any) error", "Scan", "...any|error"},
		{"Scan(...any) error", "Scan", "...any|error"},
		{"func (s T) Close()", "Close", "|"},
		{"Close() error", "Close", "|error"},
		{"func (s T) Pair(a, b int, m map[string] *pgx.Conn) (x, y chan int)", "Pair", "int,int,map[string]*Conn|chan int,chan int"},
		{"Do(f func(int) error)", "Do", "func(int)error|"},
		{"func (s T) Long(a int, b …", "Long", anyShape},
	} {
		if got := goShape(c.sig, c.name); got != c.want {
			t.Errorf("goShape(%q) = %q, want %q", c.sig, got, c.want)
		}
	}
}

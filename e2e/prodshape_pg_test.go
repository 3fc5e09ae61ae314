package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// privatePostgres is a PostgreSQL cluster the test starts for the platform's
// own database, so that restarting it (a failover, as the platform sees one)
// leaves the machine's shared server, and everyone else's tests, alone.
type privatePostgres struct {
	bin, dir, log string
	port          int
	asUser        []string // runuser -u postgres --, when the test runs as root (initdb refuses root)
}

// startPrivatePostgres initialises a cluster in a fresh directory with the
// Debian server binaries, trust auth on loopback, on a port below 32768, and
// starts it; it is stopped and removed with the test.
func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("no PostgreSQL server binaries under /usr/lib/postgresql")
		}
		t.Skip("no PostgreSQL server binaries under /usr/lib/postgresql")
	}
	slices.Sort(bins)
	p := &privatePostgres{bin: filepath.Dir(bins[len(bins)-1]), port: freePortRun(t, 1)}
	dir, err := os.MkdirTemp("", "guilds-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs a postgres user for initdb: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		p.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	p.dir = filepath.Join(dir, "data")
	p.run(t, "initdb", "-D", p.dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	// The server's output goes to a file: a server holding the pipe that
	// CombinedOutput reads would keep pg_ctl from ever looking finished.
	p.log = filepath.Join(dir, "log")
	p.run(t, "pg_ctl", "-D", p.dir, "-w", "-t", "120", "-l", p.log, "-o", p.options(dir), "start")
	t.Cleanup(func() {
		_ = p.command("pg_ctl", "-D", p.dir, "-m", "immediate", "-w", "stop").Run()
	})
	return p
}

// options: loopback only, its socket in its own directory, fsync off (a
// test's data need not survive the machine), room for every process's pool.
func (p *privatePostgres) options(dir string) string {
	return fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300", p.port, dir)
}

// URL is the connection string of database name on the cluster.
func (p *privatePostgres) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", p.port, name)
}

// restart stops the cluster, cutting every connection (fast shutdown: open
// transactions are rolled back), and starts it again, as a failover to a
// replica at the same address looks to its clients. It returns once the
// cluster accepts connections.
func (p *privatePostgres) restart(t *testing.T) {
	t.Helper()
	p.run(t, "pg_ctl", "-D", p.dir, "-m", "fast", "-w", "-t", "120", "-l", p.log, "restart")
}

func (p *privatePostgres) command(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string(nil), p.asUser...), filepath.Join(p.bin, name)), args...)
	return exec.Command(argv[0], argv[1:]...)
}

func (p *privatePostgres) run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := p.command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

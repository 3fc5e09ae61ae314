package sandbox

import (
	"errors"
	"slices"
	"testing"
)

func TestSpecNormalize(t *testing.T) {
	s, err := Spec{Image: "img"}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if s.Memory != DefaultMemory || s.CPUs != DefaultCPUs || s.PidsLimit != DefaultPidsLimit || s.Network || s.WritableRootfs {
		t.Fatalf("defaults = %+v", s)
	}
	for name, bad := range map[string]Spec{
		"negative memory": {Memory: -1},
		"negative cpus":   {CPUs: -0.5},
		"reserved label":  {Labels: map[string]string{"guilds.agent": "x"}},
		"env name":        {Env: map[string]string{"A=B": "x"}},
		"relative bind":   {Binds: []Bind{{Source: "rel", Target: "/mnt/x"}}},
		"bind over home":  {Binds: []Bind{{Source: "/srv/x", Target: "/home/agent/x"}}},
		"bind on root":    {Binds: []Bind{{Source: "/srv/x", Target: "/"}}},
		"unclean target":  {Binds: []Bind{{Source: "/srv/x", Target: "/mnt/../etc"}}},
	} {
		if _, err := bad.Normalize(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

func TestAllLabels(t *testing.T) {
	got := Spec{AgentID: "a", RunID: "r", Labels: map[string]string{"x": "y"}}.AllLabels("s")
	want := map[string]string{LabelManaged: "true", LabelAgent: "a", LabelRun: "r", LabelScope: "s", "x": "y"}
	if len(got) != len(want) {
		t.Fatalf("labels = %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := (Spec{}).AllLabels("")[LabelScope]; ok {
		t.Error("no scope label without a scope")
	}
}

func TestExecRequestNormalize(t *testing.T) {
	r, err := ExecRequest{Cmd: []string{"true"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if r.Timeout != DefaultExecTimeout || r.MaxOutput != DefaultMaxOutput || r.Dir != HomeDir {
		t.Fatalf("defaults = %+v", r)
	}
	for name, bad := range map[string]ExecRequest{
		"empty":            {},
		"empty program":    {Cmd: []string{""}},
		"negative timeout": {Cmd: []string{"true"}, Timeout: -1},
		"relative dir":     {Cmd: []string{"true"}, Dir: "home"},
		"env name":         {Cmd: []string{"true"}, Env: map[string]string{"": "x"}},
	} {
		if _, err := bad.Normalize(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

func TestCheckPath(t *testing.T) {
	for _, ok := range []string{"/", "/home/agent", "/run/guilds/requests/r.json", "/a/.hidden"} {
		if err := CheckPath(ok); err != nil {
			t.Errorf("CheckPath(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a", "/a/../b", "/a/./b", "/a//b", "/a/", "/a\x00b"} {
		if err := CheckPath(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckPath(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestEnvList(t *testing.T) {
	got := EnvList(map[string]string{"B": "1", "A": "1"}, nil, map[string]string{"B": "2"})
	if want := []string{"A=1", "B=2"}; !slices.Equal(got, want) {
		t.Fatalf("EnvList = %v, want %v", got, want)
	}
}

// An exec names another user only by number, never root.
func TestExecUser(t *testing.T) {
	for _, ok := range []string{"", BrowserUser, "1001"} {
		if _, err := (ExecRequest{Cmd: []string{"true"}, User: ok}).Normalize(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"0", "0:0", "root", "1001:0", "agent", "01001", "1001:", ":1001", "-1"} {
		if _, err := (ExecRequest{Cmd: []string{"true"}, User: bad}).Normalize(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

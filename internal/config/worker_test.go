package config

import (
	"strings"
	"testing"
)

func TestWorkerDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Worker{MaxActivities: 200, MaxWorkflowTasks: 20, ActivityPollers: 4, WorkflowPollers: 2}
	if c.Worker != want || c.DBMaxConns != 0 {
		t.Fatalf("worker = %+v, db max conns %d; want %+v, 0", c.Worker, c.DBMaxConns, want)
	}
	if c.PoolURL() != c.DatabaseURL {
		t.Fatalf("pool url %q changed without GUILDS_DB_MAX_CONNS", c.PoolURL())
	}
}

func TestWorkerSettings(t *testing.T) {
	c, err := Load(env(map[string]string{
		"GUILDS_WORKER_MAX_ACTIVITIES": "50", "GUILDS_WORKER_MAX_WORKFLOW_TASKS": "8",
		"GUILDS_WORKER_POLLERS": "6/3", "GUILDS_DB_MAX_CONNS": "30",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Worker != (Worker{MaxActivities: 50, MaxWorkflowTasks: 8, ActivityPollers: 6, WorkflowPollers: 3}) || c.DBMaxConns != 30 {
		t.Fatalf("worker = %+v, db max conns %d", c.Worker, c.DBMaxConns)
	}
	if got := c.PoolURL(); got != "postgres://postgres@127.0.0.1:5432/guilds?pool_max_conns=30&sslmode=disable" {
		t.Fatalf("pool url = %q", got)
	}
	c, err = Load(env(map[string]string{"GUILDS_WORKER_POLLERS": "5", "GUILDS_DB_MAX_CONNS": "12",
		"DATABASE_URL": "host=db user=guilds dbname=guilds"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Worker.ActivityPollers != 5 || c.Worker.WorkflowPollers != 5 {
		t.Fatalf("one poller count: %+v", c.Worker)
	}
	if got := c.PoolURL(); got != "host=db user=guilds dbname=guilds pool_max_conns=12" {
		t.Fatalf("pool dsn = %q", got)
	}
}

func TestWorkerBadValuesNameTheirVariable(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"GUILDS_WORKER_MAX_ACTIVITIES":     {"GUILDS_WORKER_MAX_ACTIVITIES": "0"},
		"GUILDS_WORKER_MAX_WORKFLOW_TASKS": {"GUILDS_WORKER_MAX_WORKFLOW_TASKS": "many"},
		"GUILDS_WORKER_POLLERS":            {"GUILDS_WORKER_POLLERS": "4/x"},
		"GUILDS_DB_MAX_CONNS":              {"GUILDS_DB_MAX_CONNS": "-3"},
		"pool_max_conns":                   {"GUILDS_DB_MAX_CONNS": "9", "DATABASE_URL": "postgres://h/db?pool_max_conns=4"},
	} {
		_, err := Load(env(vars))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: error %v does not name %s", vars, err, name)
		}
	}
}

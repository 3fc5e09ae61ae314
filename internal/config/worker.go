package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Worker sizes the Temporal worker of `guilds worker` and `guilds dev`
// (docs/scaling.md). The defaults suit a 2-core machine.
type Worker struct {
	// MaxActivities (GUILDS_WORKER_MAX_ACTIVITIES) bounds the activities
	// and, separately, the local activities (quick tool calls) running at
	// once. Most wait on a model or a remote tool, not on a core.
	MaxActivities int
	// MaxWorkflowTasks (GUILDS_WORKER_MAX_WORKFLOW_TASKS) bounds the
	// workflow tasks running at once: CPU work, a few per core.
	MaxWorkflowTasks int
	// ActivityPollers and WorkflowPollers (GUILDS_WORKER_POLLERS, as
	// activity/workflow) are the long polls kept open on the task queue.
	ActivityPollers int
	WorkflowPollers int
}

// Worker defaults.
const (
	DefaultWorkerMaxActivities    = 200
	DefaultWorkerMaxWorkflowTasks = 20
	DefaultWorkerActivityPollers  = 4
	DefaultWorkerWorkflowPollers  = 2
	// maxWorkerLimit bounds every worker number: a typo such as 20000 is
	// refused rather than starving the database.
	maxWorkerLimit = 10000
)

func loadWorker(or func(name, def string) string) (Worker, error) {
	w := Worker{}
	var err error
	if w.MaxActivities, err = positive(or, "GUILDS_WORKER_MAX_ACTIVITIES", DefaultWorkerMaxActivities); err != nil {
		return w, err
	}
	if w.MaxWorkflowTasks, err = positive(or, "GUILDS_WORKER_MAX_WORKFLOW_TASKS", DefaultWorkerMaxWorkflowTasks); err != nil {
		return w, err
	}
	def := fmt.Sprintf("%d/%d", DefaultWorkerActivityPollers, DefaultWorkerWorkflowPollers)
	v := or("GUILDS_WORKER_POLLERS", def)
	act, wf, two := strings.Cut(v, "/")
	if !two {
		wf = act // one number: both
	}
	a, errA := strconv.Atoi(strings.TrimSpace(act))
	f, errF := strconv.Atoi(strings.TrimSpace(wf))
	if errA != nil || errF != nil || a < 1 || f < 1 || a > maxWorkerLimit || f > maxWorkerLimit {
		return w, fmt.Errorf("GUILDS_WORKER_POLLERS must be activity/workflow poller counts such as %s (or one count for both), each from 1 to %d, got %q", def, maxWorkerLimit, v)
	}
	w.ActivityPollers, w.WorkflowPollers = a, f
	return w, nil
}

// positive reads a whole number from 1 to maxWorkerLimit.
func positive(or func(name, def string) string, name string, def int) (int, error) {
	v := or(name, strconv.Itoa(def))
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxWorkerLimit {
		return 0, fmt.Errorf("%s must be a whole number from 1 to %d, got %q", name, maxWorkerLimit, v)
	}
	return n, nil
}

// loadDBMaxConns reads GUILDS_DB_MAX_CONNS: 0 (unset) keeps the store's
// default pool size. DATABASE_URL's own pool_max_conns and this variable
// cannot both be set.
func loadDBMaxConns(or func(name, def string) string, databaseURL string) (int, error) {
	v := or("GUILDS_DB_MAX_CONNS", "")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxWorkerLimit {
		return 0, fmt.Errorf("GUILDS_DB_MAX_CONNS must be a whole number from 1 to %d, got %q", maxWorkerLimit, v)
	}
	if strings.Contains(databaseURL, "pool_max_conns") {
		return 0, fmt.Errorf("GUILDS_DB_MAX_CONNS and DATABASE_URL's pool_max_conns are both set: keep one")
	}
	return n, nil
}

// PoolURL is DATABASE_URL with GUILDS_DB_MAX_CONNS applied as pgxpool's
// pool_max_conns, for the process's connection pool (store.Open).
func (c Config) PoolURL() string {
	if c.DBMaxConns == 0 {
		return c.DatabaseURL
	}
	n := strconv.Itoa(c.DBMaxConns)
	if u, err := url.Parse(c.DatabaseURL); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("pool_max_conns", n)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimSpace(c.DatabaseURL) + " pool_max_conns=" + n // key=value form
}

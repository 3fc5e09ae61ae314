package githubapp_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/testdb"
)

// Two organisations attaching the same installation at the same moment
// cannot both pass the check: one attaches, the other waits for an
// instance admin.
func TestConcurrentAttachesOfOneInstallationLetOneThrough(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	ms, err := catalog.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.Seed(ctx, db, ms); err != nil {
		t.Fatal(err)
	}
	for round := range 10 {
		var conns [2]string
		for i := range conns {
			var org string
			if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ($1, $1) RETURNING id`,
				fmt.Sprintf("org-%d-%d", round, i)).Scan(&org); err != nil {
				t.Fatal(err)
			}
			conns[i] = connectionstest.InsertOf(t, db, "github", "organisation", org)
		}
		inst := int64(1000 + round)
		choice := githubapp.Choice{InstallationID: inst, Account: "shared-gh"}
		var wg sync.WaitGroup
		errs := make([]error, len(conns))
		start := make(chan struct{})
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = githubapp.Attach(ctx, db, c, choice, time.Now())
			}()
		}
		close(start)
		wg.Wait()
		var attached, waiting int
		for _, err := range errs {
			var na *githubapp.NeedsApprovalError
			switch {
			case err == nil:
				attached++
			case errors.As(err, &na):
				waiting++
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if attached != 1 || waiting != 1 {
			t.Fatalf("round %d: %d attached, %d waiting for approval; want one of each", round, attached, waiting)
		}
	}
}

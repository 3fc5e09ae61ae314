package workerhealth_test

import (
	"context"
	"testing"

	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/workerhealth"
)

// One working worker beside one whose engine is down makes code tools
// available; only down reports make them unavailable, with what to do.
func TestEngineState(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	if st, err := workerhealth.Engine(ctx, db); err != nil || st.Engine != workerhealth.EngineUnknown || st.Advice == "" {
		t.Fatalf("no report: %+v %v", st, err)
	}
	if err := workerhealth.Write(ctx, db, workerhealth.Report{WorkerID: "a", Driver: "docker", EngineError: "refused"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := workerhealth.Engine(ctx, db); st.Engine != workerhealth.EngineDown || st.Error != "refused" || st.Advice == "" {
		t.Errorf("a down engine: %+v", st)
	}
	if err := workerhealth.Write(ctx, db, workerhealth.Report{WorkerID: "b", Driver: "docker", EngineOK: true}); err != nil {
		t.Fatal(err)
	}
	if st, _ := workerhealth.Engine(ctx, db); st.Engine != workerhealth.EngineWorking || st.Advice != "" {
		t.Errorf("one working engine: %+v", st)
	}
	// A worker's later report replaces its earlier one.
	if err := workerhealth.Write(ctx, db, workerhealth.Report{WorkerID: "b", Driver: "docker", EngineError: "gone"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := workerhealth.Engine(ctx, db); st.Engine != workerhealth.EngineDown {
		t.Errorf("both down: %+v", st)
	}
}

package worker

import (
	"context"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

type acts struct{}

func (acts) Finish(context.Context) error { return nil }

func wf(workflow.Context) error { return nil }

func TestCheckRefusesUnnamedAndCollidingRegistrations(t *testing.T) {
	var a acts
	for name, reg := range map[string]Registration{
		"struct by method names": func(w sdkworker.Registry) { w.RegisterActivity(a) },
		"unnamed function":       func(w sdkworker.Registry) { w.RegisterActivityWithOptions(a.Finish, activity.RegisterOptions{}) },
		"names differing in case": func(w sdkworker.Registry) {
			w.RegisterActivityWithOptions(a.Finish, activity.RegisterOptions{Name: "finish"})
			w.RegisterActivityWithOptions(a.Finish, activity.RegisterOptions{Name: "Finish"})
		},
		"unnamed workflow": func(w sdkworker.Registry) { w.RegisterWorkflow(wf) },
	} {
		if err := Check(reg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := func(w sdkworker.Registry) {
		w.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "wf"})
		w.RegisterActivityWithOptions(a.Finish, activity.RegisterOptions{Name: "wf.finish"})
	}
	if err := Check(ok); err != nil {
		t.Fatal(err)
	}
	if err := Check(ok, ok); err == nil || !strings.Contains(err.Error(), "collides") {
		t.Fatalf("the same registration twice: %v", err)
	}
}

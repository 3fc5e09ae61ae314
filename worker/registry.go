package worker

import (
	"fmt"
	"strings"

	"github.com/nexus-rpc/sdk-go/nexus"
	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// checkedRegistry refuses what once broke the assembled worker: an activity
// registered under its Go method name, and two activities (or workflows) whose
// names differ only in case. The SDK aliases a function's Go name to the last
// name it was registered under, so a workflow that scheduled activities by
// method value could run another package's activity of the same method name.
type checkedRegistry struct {
	inner      sdkworker.Registry // nil: record only (Check)
	activities map[string]string  // lower-cased name → name
	workflows  map[string]string
	err        error
}

func newCheckedRegistry(inner sdkworker.Registry) *checkedRegistry {
	return &checkedRegistry{inner: inner, activities: map[string]string{}, workflows: map[string]string{}}
}

func (r *checkedRegistry) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func claim(seen map[string]string, kind, name string) error {
	if name == "" {
		return fmt.Errorf("a %s is registered without an explicit name", kind)
	}
	if prev, ok := seen[strings.ToLower(name)]; ok {
		return fmt.Errorf("%s name %q collides with %q", kind, name, prev)
	}
	seen[strings.ToLower(name)] = name
	return nil
}

func (r *checkedRegistry) RegisterWorkflow(w any) {
	r.fail("workflow %T is registered without an explicit name", w)
}

func (r *checkedRegistry) RegisterWorkflowWithOptions(w any, o workflow.RegisterOptions) {
	if err := claim(r.workflows, "workflow", o.Name); err != nil {
		r.fail("%w", err)
		return
	}
	if r.inner != nil {
		r.inner.RegisterWorkflowWithOptions(w, o)
	}
}

func (r *checkedRegistry) RegisterDynamicWorkflow(w any, o workflow.DynamicRegisterOptions) {
	r.fail("dynamic workflows are not used by guilds")
}

func (r *checkedRegistry) RegisterActivity(a any) {
	r.fail("activity %T is registered without an explicit name", a)
}

func (r *checkedRegistry) RegisterActivityWithOptions(a any, o activity.RegisterOptions) {
	if err := claim(r.activities, "activity", o.Name); err != nil {
		r.fail("%w", err)
		return
	}
	if r.inner != nil {
		r.inner.RegisterActivityWithOptions(a, o)
	}
}

func (r *checkedRegistry) RegisterDynamicActivity(a any, o activity.DynamicRegisterOptions) {
	r.fail("dynamic activities are not used by guilds")
}

func (r *checkedRegistry) RegisterNexusService(s *nexus.Service) {
	r.fail("nexus services are not used by guilds")
}

// Check applies the registrations to a recording registry and reports the
// first name that is missing or collides; Run refuses to start on the same.
func Check(regs ...Registration) error {
	r := newCheckedRegistry(nil)
	for _, reg := range regs {
		reg(r)
	}
	return r.err
}

package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	runwf "github.com/guilds/guilds/workflows/run"
)

// runSearchAttributes are the custom search attributes every run sets: a
// namespace without them refuses the run's start.
var runSearchAttributes = []temporal.SearchAttributeKey{
	runwf.SAOrganisation, runwf.SAGuild, runwf.SAAgent, runwf.SATrigger,
}

// ensureSearchAttributes registers on the namespace the run's search
// attributes it lacks, so that a run start never fails on them. When the
// server refuses (no operator permission), the process must not start: the
// error is one line with the command that registers them.
func ensureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	missing, err := missingSearchAttributes(ctx, c, namespace)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing,
	})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) { // AlreadyExists: another replica added them first
		return fmt.Errorf("the Temporal namespace %q lacks the search attributes %s and refused to add them (%s); register them with: %s",
			namespace, strings.Join(sortedNames(missing), ", "), oneLine(err), createCommand(namespace, missing))
	}
	return waitSearchAttributes(ctx, c, namespace)
}

// missingSearchAttributes lists the run's attributes the namespace lacks.
func missingSearchAttributes(ctx context.Context, c client.Client, namespace string) (map[string]enumspb.IndexedValueType, error) {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	var notFound *serviceerror.NamespaceNotFound
	if errors.As(err, &notFound) {
		return nil, fmt.Errorf("the Temporal namespace %q does not exist (set TEMPORAL_NAMESPACE, or create it with `temporal operator namespace create --namespace %s`)", namespace, namespace)
	}
	if err != nil {
		want := map[string]enumspb.IndexedValueType{}
		for _, k := range runSearchAttributes {
			want[k.GetName()] = k.GetValueType()
		}
		return nil, fmt.Errorf("cannot list the search attributes of Temporal namespace %q (%s); if they are missing, register them with: %s",
			namespace, oneLine(err), createCommand(namespace, want))
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, k := range runSearchAttributes {
		if _, ok := resp.GetCustomAttributes()[k.GetName()]; !ok {
			missing[k.GetName()] = k.GetValueType()
		}
	}
	return missing, nil
}

// waitSearchAttributes waits until the namespace lists them all (with
// Elasticsearch visibility the registration completes in the background),
// then until the frontend takes them in a query: with SQL visibility it
// learns of them only at its next namespace refresh, and until then it
// refuses a run's start that sets them.
func waitSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		missing, err := missingSearchAttributes(ctx, c, namespace)
		if err == nil && len(missing) == 0 {
			if err = searchAttributesServed(ctx, c, namespace); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("still missing %s", strings.Join(sortedNames(missing), ", "))
			}
			return fmt.Errorf("the Temporal namespace %q does not take the search attributes it was given (%s)", namespace, oneLine(err))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// searchAttributesServed asks the frontend a count whose query names every
// run search attribute: it answers only once it knows them all.
func searchAttributesServed(ctx context.Context, c client.Client, namespace string) error {
	terms := make([]string, 0, len(runSearchAttributes))
	for _, k := range runSearchAttributes {
		terms = append(terms, k.GetName()+" = 'guilds-probe'")
	}
	_, err := c.WorkflowService().CountWorkflowExecutions(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Namespace: namespace, Query: strings.Join(terms, " AND "),
	})
	return err
}

func sortedNames(m map[string]enumspb.IndexedValueType) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// createCommand is the Temporal CLI command that registers the attributes.
func createCommand(namespace string, m map[string]enumspb.IndexedValueType) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`temporal operator search-attribute create --namespace %s", namespace)
	for _, n := range sortedNames(m) {
		fmt.Fprintf(&b, " --name %s --type %s", n, m[n])
	}
	return b.String() + "`"
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

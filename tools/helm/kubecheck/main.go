// Command kubecheck validates rendered Kubernetes manifests offline: each
// document of a YAML stream (helm template's output) is decoded strictly
// into its typed object from k8s.io/api, so an unknown field, a value of the
// wrong type or a kind this client does not know fails, and then the
// basics are checked (names, container images and ports, probes that name a
// port, selectors that select, references inside the stream). No schema is
// downloaded: the Go types are the schema.
//
//	kubecheck [-expect Deployment=2,Service=1] [FILE…]   (stdin without FILE)
//	kubecheck -env Deployment/NAME/CONTAINER [FILE]
//
// With -env it prints, once the stream passed, the environment Kubernetes
// would give that container (NAME=VALUE, each ended by a NUL byte), so that
// a script can start the real binary with exactly the chart's configuration.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kubecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	expect := fs.String("expect", "", "exact count of objects of each `Kind=N[,Kind=N…]`; other kinds are not counted")
	envOf := fs.String("env", "", "print the environment of `Kind/name/container`, NUL-separated, instead of the summary")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *envOf != "" && fs.NArg() > 1 {
		fmt.Fprintln(stderr, "kubecheck: -env reads one stream")
		return 2
	}
	want, err := parseExpect(*expect)
	if err != nil {
		fmt.Fprintln(stderr, "kubecheck:", err)
		return 2
	}
	var inputs []io.Reader
	var names []string
	if fs.NArg() == 0 {
		inputs, names = []io.Reader{stdin}, []string{"stdin"}
	}
	for _, name := range fs.Args() {
		f, err := os.Open(name) //nolint:gosec // G304: reading the files named on the command line is the tool's job
		if err != nil {
			fmt.Fprintln(stderr, "kubecheck:", err)
			return 2
		}
		defer func() { _ = f.Close() }()
		inputs, names = append(inputs, f), append(names, name)
	}
	failed := false
	for i, in := range inputs {
		objs, errs := Check(in)
		errs = append(errs, checkCounts(objs, want)...)
		for _, e := range errs {
			fmt.Fprintf(stderr, "kubecheck: %s: %v\n", names[i], e)
		}
		if len(errs) > 0 {
			failed = true
			continue
		}
		if *envOf != "" {
			env, err := ContainerEnv(objs, *envOf)
			if err != nil {
				fmt.Fprintf(stderr, "kubecheck: %s: %v\n", names[i], err)
				return 1
			}
			for _, kv := range env {
				fmt.Fprint(stdout, kv, "\x00")
			}
			continue
		}
		fmt.Fprintf(stdout, "kubecheck: %s: %d objects ok (%s)\n", names[i], len(objs), summary(objs))
	}
	if failed {
		return 1
	}
	return 0
}

func parseExpect(s string) (map[string]int, error) {
	want := map[string]int{}
	if s == "" {
		return want, nil
	}
	for _, part := range strings.Split(s, ",") {
		kind, n, ok := strings.Cut(strings.TrimSpace(part), "=")
		count, err := strconv.Atoi(n)
		if !ok || kind == "" || err != nil || count < 0 {
			return nil, fmt.Errorf("-expect wants Kind=N[,Kind=N…], got %q", part)
		}
		want[kind] = count
	}
	return want, nil
}

func checkCounts(objs []Object, want map[string]int) []error {
	got := map[string]int{}
	for _, o := range objs {
		got[o.GVK.Kind]++
	}
	var errs []error
	kinds := make([]string, 0, len(want))
	for k := range want {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		if got[k] != want[k] {
			errs = append(errs, fmt.Errorf("expected %d %s object(s), found %d", want[k], k, got[k]))
		}
	}
	return errs
}

func summary(objs []Object) string {
	got := map[string]int{}
	for _, o := range objs {
		got[o.GVK.Kind]++
	}
	kinds := make([]string, 0, len(got))
	for k, n := range got {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ",")
}

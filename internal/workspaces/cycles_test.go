package workspaces

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
)

// treeListing lists every entry of the home with its kind, mode and, for a
// file, the hash of its content (a link: its target), in a stable order.
const treeListing = `cd "$HOME" 2>/dev/null || cd /home/agent
find . | LC_ALL=C sort | while IFS= read -r f; do
  if [ -L "$f" ]; then echo "L $f -> $(readlink "$f")"
  elif [ -f "$f" ]; then echo "F $f $(stat -c %a "$f") $(sha256sum <"$f" | cut -c1-64)"
  else echo "D $f $(stat -c %a "$f")"; fi
done`

// Each cycle writes to the home (new files, an appended log, a rewritten
// file, a link, an executable), lists it, stops the sandbox (a park and an
// explicit stop in turn, so both the frozen and the re-created sandbox are
// checked), starts it with the next call and lists it again: the two
// listings must be identical. On the pool world, the new sandbox after a
// stop is a pooled one, given the home at its claim. GUILDS_SANDBOX_CYCLES sets the count (100 for
// the full run; 10 by default, which make test runs).
func TestHomeIsIdenticalAcrossStopStartCycles(t *testing.T) {
	t.Parallel()
	cycles := 10
	if v := os.Getenv("GUILDS_SANDBOX_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("GUILDS_SANDBOX_CYCLES=%q: want a positive count", v)
		}
		cycles = n
	}
	for _, name := range append(slices.Clone(worldNames), "pool") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := openWorld(t, name)
			m, agent := manager(t, w, Options{})
			if name == "pool" {
				startPool(t, m, w, 1)
			}
			for i := range cycles {
				exec(t, m, agent, fmt.Sprintf(`mkdir -p src/c%[1]d && head -c 40000 /dev/urandom >src/c%[1]d/blob
echo "cycle %[1]d" >>log.txt
printf 'v%[1]d\n' >state && ln -sf ../state src/c%[1]d/link
printf '#!/bin/sh\necho %[1]d\n' >run.sh && chmod 755 run.sh`, i))
				before := exec(t, m, agent, treeListing)
				how := "park"
				if i%2 == 1 {
					how = "stop"
					if err := m.Stop(context.Background(), agent); err != nil {
						t.Fatalf("cycle %d: stop: %v", i, err)
					}
				} else if err := m.park(agent); err != nil {
					t.Fatalf("cycle %d: park: %v", i, err)
				}
				if after := exec(t, m, agent, treeListing); after != before {
					t.Fatalf("cycle %d (%s): the home changed across the stop\nbefore:\n%s\nafter:\n%s", i, how, before, after)
				}
			}
		})
	}
}

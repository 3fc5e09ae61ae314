// What the run page and the run lists both say about a run: its duration,
// its tokens, and each call's state in words.

// ms renders a duration for a person: 850 ms, 12.4 s, 3 min 05 s, 2 h 04 min.
export function ms(n) {
  if (n == null || isNaN(n)) return "—";
  if (n < 1000) return `${Math.round(n)} ms`;
  const s = n / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

// duration of a run: start to end, or to now while it is live.
export function duration(r, now = Date.now()) {
  const start = Date.parse(r.started_at || r.created_at);
  if (isNaN(start)) return "—";
  const end = r.finished_at ? Date.parse(r.finished_at) : now;
  return ms(end - start) + (r.finished_at ? "" : " so far");
}

export function tokens(inTok, outTok) {
  if (!inTok && !outTok) return "—";
  return `${(inTok || 0).toLocaleString()} / ${(outTok || 0).toLocaleString()}`;
}

// states of a call as the timeline shows them: the class sets the colour,
// the text says it, so colour is never the only signal.
export const callStates = {
  running: "running",
  ok: "ok",
  error: "error",
  refused: "refused",
  denied: "denied",
  timed_out: "timed out",
  interrupted: "interrupted",
};

// plainError says a call's or run's failure in words an operator reads first;
// the raw message stays below it.
export function plainError(outcome, text = "") {
  switch (outcome) {
    case "refused": return "The platform did not run this call (not offered to the agent, over budget, or stopped by a rate limit or breaker).";
    case "denied": return "A person refused this call, or its approval expired; it did not run.";
    case "timed_out": return "The service did not answer in time.";
    case "interrupted": return "The worker running this call was lost, and the call was not tried again.";
    case "error": return /unauthori[sz]ed|401|403|forbidden/i.test(text) ? "The service refused the login's credentials." :
      /not found|404/i.test(text) ? "The service did not find what the call named." :
        /connection refused|no such host|unreachable|dial tcp/i.test(text) ? "The service could not be reached." :
          "The tool ran and reported a failure.";
  }
  return "";
}

// Studio: where an operator investigates an issue an agent filed. It shows
// the run, the failing call with its redacted arguments and result, the
// tool's schema and the switches that offered it, the login's health, a Test
// of the same call (the Tools view's Test route) and Resolve.
import * as api from "../api.gen.js";
import { h, status, when, errorBox } from "../ui.js";
import { navigate } from "../state.js";

const scopeWord = { platform: "Platform", organisation: "Organisation", guild: "Guild", agent: "Agent" };
const outcomeWord = { ok: "succeeded", error: "failed", refused: "refused", interrupted: "interrupted", denied: "denied", timed_out: "timed out" };

export async function studioPage(main, id) {
  const seq = new URLSearchParams(location.search).get("seq") || undefined;
  const v = await api.get_issues_by_id_studio(id, { query: { seq } });
  const iss = v.issue;
  main.append(
    h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "/inbox" }, "Inbox"), " / ",
      h("a", { href: `/guilds/${iss.guild_id}?tab=issues` }, v.guild_name), " / Studio"),
    h("h1", {}, "Studio: ", iss.summary),
    h("p", {}, h("span", { class: "badge" }, iss.kind.replace("_", " ")), " ",
      `filed ${when(iss.created_at)}`, v.agent_name ? ` by ${v.agent_name}` : "", " · ",
      h("span", { id: "issue-state" }, iss.status === "open" ? "open" : "resolved " + when(iss.resolved_at))),
    iss.detail ? h("section", { "aria-labelledby": "h-detail" }, h("h2", { id: "h-detail" }, "What the agent said"), h("pre", { class: "wrap" }, iss.detail)) : null,
    resolveButton(iss));
  if (v.missing) main.append(h("p", { class: "muted", id: "studio-missing" }, "Nothing more to show: ", v.missing, "."));
  if (v.run) main.append(runSection(v));
  if (v.call) main.append(callSection(v));
  if (v.tool) main.append(toolSection(v));
  if (v.walk) main.append(walkSection(v));
  if (v.login) {
    const health = h("section", { "aria-labelledby": "h-login" });
    main.append(health);
    loginSection(health, v);
  }
  if (v.call) main.append(testSection(v));
}

function resolveButton(iss) {
  if (iss.status !== "open") return null;
  return h("p", {}, h("button", { type: "button", onclick: async (ev) => {
    if (!confirm("Resolve this issue? It leaves the inbox.")) return;
    ev.target.disabled = true;
    try {
      await api.post_issues_by_id_resolve(iss.id);
      status("Issue resolved");
      navigate(location.pathname + location.search, true);
    } catch (e) { status(e.message, "error"); ev.target.disabled = false; }
  } }, "Resolve"));
}

function runSection(v) {
  const r = v.run;
  const pick = v.calls.length > 1 ? h("p", {}, h("label", { for: "studio-call" }, "Call shown "),
    h("select", { id: "studio-call", onchange: (ev) => navigate(`${location.pathname}?seq=${ev.target.value}`) },
      v.calls.map((c) => h("option", { value: c.seq, selected: v.call && c.seq === v.call.seq }, `#${c.seq} ${c.tool} — ${outcomeWord[c.outcome] || c.outcome}`)))) : null;
  return h("section", { "aria-labelledby": "h-run" }, h("h2", { id: "h-run" }, "The run"),
    h("p", {}, h("span", { class: "badge " + r.status }, r.status), ` ${r.trigger} run started ${when(r.started_at || r.created_at)}`,
      ` · ${v.calls.length} call(s) · `, h("a", { href: `/runs/${r.id}` }, "Open the run")),
    r.error ? h("p", { class: "form-error" }, r.error) : null, pick);
}

function callSection(v) {
  const c = v.call;
  const word = outcomeWord[c.outcome] || c.outcome;
  return h("section", { "aria-labelledby": "h-call" }, h("h2", { id: "h-call" }, c.outcome === "ok" ? "The call" : "The failing call"),
    h("p", {}, h("code", {}, c.tool), " ", h("span", { class: "badge " + (c.outcome === "ok" ? "completed" : "failed") }, word),
      ` in ${c.duration_ms} ms, ${when(c.started_at)}`),
    h("h3", {}, "Arguments (redacted)"), h("pre", { class: "wrap", id: "studio-arguments" }, pretty(c.arguments)),
    h("h3", {}, "Result (redacted)"), h("pre", { class: "wrap", id: "studio-result" }, c.result));
}

function toolSection(v) {
  const t = v.tool;
  const where = t.kind === "mcp" ? `${t.server_name || t.server_slug}'s tool ${t.remote_name}` : "a platform tool";
  return h("section", { "aria-labelledby": "h-tool" }, h("h2", { id: "h-tool" }, "The tool"),
    h("p", {}, h("code", {}, t.name), " — ", where), t.description ? h("p", { class: "muted" }, t.description) : null,
    h("details", {}, h("summary", {}, "Input schema"), h("pre", { class: "wrap" }, pretty(t.schema))));
}

const sw = (s) => (!s || s === "inherit" ? "inherits" : s === "on" ? "On" : "Off");

function walkSection(v) {
  const w = v.walk;
  const remote = v.tool?.kind === "mcp";
  return h("section", { "aria-labelledby": "h-walk" }, h("h2", { id: "h-walk" }, "Switch chain"),
    h("p", {}, `For this agent the tool is ${w.enabled ? "On" : "Off"}`, w.decided_by ? `, decided by the ${w.decided_by}` : ", by default", "."),
    h("table", { class: "walk" }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Scope"),
      remote ? h("th", { scope: "col" }, "Server") : null, h("th", { scope: "col" }, "Tool"), remote ? h("th", { scope: "col" }, "Names a login") : null)),
    h("tbody", {}, w.steps.map((s) => h("tr", { class: s.scope === w.decided_by ? "decides" : null },
      h("th", { scope: "row" }, scopeWord[s.scope] || s.scope), remote ? h("td", {}, sw(s.server)) : null, h("td", {}, sw(s.tool)),
      remote ? h("td", {}, s.login ? (s.login === v.login?.id ? "yes, the one that served the call" : "yes") : "—") : null)))));
}

async function loginSection(el, v) {
  const l = v.login;
  el.append(h("h2", { id: "h-login" }, "The login"),
    h("p", {}, `${l.server_name} · ${l.account_hint || "no account hint"} · owned by the ${l.owner_scope} · `, h("strong", {}, l.status)));
  if (v.tool?.server_auth === "none") {
    el.append(h("p", { id: "login-health" }, "Credential: none needed, the server takes no login."));
    return;
  }
  try {
    const hl = await api.get_mcp_connections_by_id_health(l.id);
    const calls = hl.calls === "paused" ? `calls paused after ${hl.failures_in_a_row} failures in a row, until ${when(hl.paused_until)}` :
      hl.calls === "trial_due" ? "calls paused; the next call is the trial" : "calls flow";
    el.append(h("p", { id: "login-health" }, `Credential: ${hl.state.replaceAll("_", " ")}`,
      hl.attempts ? ` (${hl.attempts} failed refreshes, next try ${when(hl.next_retry_at)})` : "",
      ` · last success ${when(hl.last_success_at)} · last failure ${when(hl.last_failure_at)}`,
      hl.last_error_code ? ` (${hl.last_error_code})` : "", ` · ${calls}.`));
  } catch (e) { el.append(errorBox(e)); }
}

// testSection calls the same tool again through the Tools view's Test
// route, with the call's arguments or the operator's edit of them.
function testSection(v) {
  const sec = h("section", { "aria-labelledby": "h-test" }, h("h2", { id: "h-test" }, "Test the call"));
  if (!v.testable) { sec.append(h("p", { class: "muted", id: "studio-why-not" }, "Test is not available: ", v.why_not, ".")); return sec; }
  const argsID = "studio-test-args";
  const args = h("textarea", { id: argsID, rows: 6, "aria-describedby": "studio-test-help" });
  args.value = pretty(v.call.arguments) || "{}";
  const out = h("pre", { class: "wrap", id: "studio-test-result", "aria-live": "polite" });
  const err = h("p", { class: "form-error", role: "alert" });
  const btn = h("button", { type: "submit" }, "Run the test");
  const f = h("form", { class: "form", "aria-label": "Test the call" },
    h("div", { class: "field" }, h("label", { for: argsID }, "Arguments (JSON)"), args,
      h("p", { class: "help", id: "studio-test-help" }, "The call's arguments as stored, redacted. Edit them to try again with other values.")),
    err, h("div", { class: "actions" }, btn));
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    err.textContent = "";
    let parsed;
    try { parsed = JSON.parse(args.value || "{}"); } catch { err.textContent = "The arguments are not valid JSON."; args.focus(); return; }
    btn.disabled = true;
    out.textContent = "Calling…";
    try {
      const r = await api.post_mcp_connections_by_id_call(v.login.id, { tool: v.tool.remote_name, arguments: parsed });
      out.textContent = r.result;
    } catch (e) {
      out.textContent = "";
      err.textContent = [e.message, ...(e.problems || []).map((p) => `${p.field}: ${p.message}`)].join(" — ");
    } finally { btn.disabled = false; }
  });
  sec.append(f, h("h3", {}, "Test result"), out);
  return sec;
}

function pretty(v) {
  if (v === undefined || v === null || v === "") return "";
  if (typeof v === "string") { try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; } }
  return JSON.stringify(v, null, 2);
}


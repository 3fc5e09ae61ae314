// The Tools view of an organisation, guild or agent: every catalog server
// and native tool with its Inherit / On / Off switch and the scope that
// decides it, per-tool switches, Not set up with the missing variables,
// and tools the box does not offer.
import * as api from "../api.gen.js";
import { h, clear, status, errorBox, when, showProblems } from "../ui.js";
import { connectDialog, coinPicker, dialog } from "./connect.js";
import { testDialog } from "./test.js";

const viewAPI = { organisation: api.get_orgs_by_id_tools, guild: api.get_guilds_by_id_tools, agent: api.get_agents_by_id_tools };
const scopeWord = { organisation: "organisation", guild: "guild", agent: "agent", platform: "platform" };

export async function toolsView(panel, scope, id) {
  const holder = h("div", { class: "tools", id: "tools-view" });
  panel.append(holder);
  const reload = async () => {
    const [view, servers] = await Promise.all([viewAPI[scope](id), catalogRows()]);
    renderTools(holder, view, servers, { scope, id, reload });
  };
  await reload().catch((e) => holder.append(errorBox(e)));
}

let catalogCache;
async function catalogRows() {
  if (!catalogCache) catalogCache = api.get_mcp_servers().then((rows) => new Map(rows.map((r) => [r.id, r]))).catch(() => new Map());
  return catalogCache;
}

// renderTools draws a view; it is timed (performance marks) for the figures.
export function renderTools(holder, view, catalog, ctx) {
  performance.mark("tools-render-start");
  clear(holder);
  holder.append(h("h2", {}, "Servers"),
    h("ul", { class: "servers" }, view.servers.map((s) => serverCard(s, catalog.get(s.id), ctx))),
    h("h2", {}, "Native tools"), nativeTable(view.native, ctx));
  performance.mark("tools-render-end");
  performance.measure("tools-render", "tools-render-start", "tools-render-end");
}

function decided(by) {
  return by ? h("span", { class: "decided" }, "decided by the " + (scopeWord[by] || by)) : h("span", { class: "decided" }, "default");
}

// asks shows an approval setting that decides for a tool (docs/approvals.md):
// "asks first", with its rules, or an explicit "does not ask" under a wider Ask.
function asks(a) {
  if (!a) return null;
  const where = scopeWord[a.scope] || a.scope;
  if (!a.ask) return h("span", { class: "badge", title: "an approval setting of the " + where }, "does not ask · the " + where);
  const rules = (a.policy?.rules || []).map((r) => `${r.arg} ${r.op} ${r.value || (r.values || []).join(", ")}`);
  return h("span", { class: "badge warn", title: rules.length ? "asks when " + rules.join(" or ") : "asks before every call" },
    "asks first · the " + where + (rules.length ? " · when " + rules.join(" or ") : ""));
}

// switch3 is a radio group Inherit / On / Off; change(value) writes it.
function switch3(label, value, change, disabled) {
  const name = "sw-" + Math.random().toString(36).slice(2);
  const group = h("div", { class: "switch3", role: "radiogroup", "aria-label": label });
  for (const v of ["inherit", "on", "off"]) {
    const id = name + "-" + v;
    group.append(h("input", { type: "radio", name, id, value: v, checked: value === v, disabled,
      onchange: () => change(v).catch((e) => { status(e.message, "error"); }) }),
    h("label", { for: id }, v[0].toUpperCase() + v.slice(1)));
  }
  return group;
}

async function writeSwitch(ctx, kind, catalogID, v) {
  const body = { scope: ctx.scope, scope_id: ctx.id, catalog_kind: kind, catalog_id: catalogID };
  if (v === "inherit") await api.delete_bindings(body).catch((e) => { if (e.status !== 404) throw e; });
  else await api.put_bindings({ ...body, enabled: v === "on" });
  status(`${catalogID}: ${v}`);
  await ctx.reload();
}

function serverCard(s, row, ctx) {
  const own = s.own_login;
  const login = s.login;
  const card = h("li", { class: "server", "data-slug": s.slug, id: "server-" + s.slug });
  const head = h("div", { class: "server-head" },
    h("h3", {}, s.name), h("span", { class: "muted" }, s.auth),
    !s.set_up ? h("span", { class: "badge warn" }, "Not set up") : null,
    login ? h("span", { class: "badge " + login.status }, login.status + (login.account_hint ? " · " + login.account_hint : "") +
      (login.decided_by && login.decided_by !== ctx.scope ? " · from the " + login.decided_by : "")) : h("span", { class: "badge" }, "no login"),
    s.has_switch ? switch3(`${s.name} at this ${ctx.scope}`, s.switch, (v) => writeSwitch(ctx, "mcp", s.id, v)) : null,
    s.has_switch ? h("span", { class: "state" }, s.enabled ? "On" : "Off", " ", decided(s.decided_by)) : null);
  card.append(head);
  if (!s.set_up) {
    card.append(h("p", { class: "missing" }, "The box lacks ", (s.missing_variables || []).map((v, i) => [i ? ", " : "", h("code", {}, v)]),
      ": set ", (s.missing_variables || []).length > 1 ? "them" : "it", " in the box's environment (Admin → Platform keys) to connect."));
  }
  if (row?.description) card.append(h("p", { class: "desc" }, row.description));
  const actions = h("div", { class: "actions" });
  if (needsNoLogin(s, row)) {
    // Nothing to type: Turn on makes its login here by listing its tools (ADR 0616).
    if (!login || login.status !== "connected") {
      actions.append(h("button", { type: "button", class: "connect", disabled: !s.set_up,
        onclick: (ev) => turnOn(s, ctx, ev.target) }, "Turn on"));
    }
  } else if (!own || own.status !== "connected") {
    // A login from a wider scope already serves this one: connecting here
    // adds this scope's own login, which wins over it.
    const inherited = !own && login?.status === "connected";
    actions.append(h("button", { type: "button", class: "connect", disabled: !s.set_up,
      title: inherited ? `Runs here use the ${login.decided_by}'s login; connect one of this ${ctx.scope}'s own to use it instead` : null,
      onclick: () => connectDialog(s, row, ctx) }, own ? "Reconnect" : inherited ? `Use another login for this ${ctx.scope}` : "Connect"));
  }
  if (login?.status === "connected" && s.kind !== "github") {
    actions.append(h("button", { type: "button", class: "refresh", onclick: (ev) => refreshTools(s, login, ctx, ev.target) }, "Refresh"));
  }
  if (own) {
    if (own.status === "connected") actions.append(h("button", { type: "button", class: "test", onclick: () => testDialog(s, own) }, "Test"));
    if (own.status === "pending" && (row?.config?.adapter || s.slug) === "drive") {
      actions.append(h("button", { type: "button", class: "folder", onclick: () => folderDialog(s, own, ctx) }, "Choose folder"));
    }
    if (own.status === "connected" && s.kind === "github") {
      actions.append(h("button", { type: "button", class: "repos", onclick: () => reposDialog(s, own, ctx) }, "Repositories"));
    }
    if (own.status === "connected" && (row?.config?.adapter || s.slug).replace(/-/g, "_") === "pinned_prices") {
      actions.append(h("button", { type: "button", class: "coins", onclick: () => coinsDialog(s, own) }, "Coins"));
    }
    actions.append(h("button", { type: "button", class: "health", onclick: (ev) => showHealth(card, own, ev.target) }, "Health"),
      h("button", { type: "button", class: "danger", onclick: async () => {
        if (!confirm(`Disconnect ${s.name}? Its bindings go too.`)) return;
        await api.delete_mcp_connections_by_id(own.id); status("Disconnected"); ctx.reload();
      } }, "Disconnect"));
  }
  card.append(actions);
  if (s.tools?.length) {
    card.append(h("details", { class: "server-tools" }, h("summary", {}, `${s.tools.length} tools`),
      h("ul", {}, s.tools.map((t) => h("li", { class: "tool", "data-tool": t.name },
        h("span", { class: "tool-name" }, t.remote_name || t.name),
        switch3(`${t.remote_name || t.name} at this ${ctx.scope}`, t.switch, (v) => writeSwitch(ctx, "mcp_tool", t.name, v), !t.listed),
        h("span", { class: "state" }, t.enabled ? "On" : "Off", " ", decided(t.decided_by)), " ", asks(t.approval),
        t.problem ? h("span", { class: "badge warn problem" }, t.problem) : null,
        t.description ? h("p", { class: "muted" }, t.description) : null)))));
  }
  return card;
}

// needsNoLogin: a remote row with auth none and nothing to fill in.
function needsNoLogin(s, row) {
  const cfg = row?.config || {};
  return s.kind === "remote" && s.auth === "none" && !cfg.provider && !cfg.fields?.length;
}

// turnOn switches a server that needs no login on at this scope; the API
// lists its tools first and says why when it cannot.
async function turnOn(s, ctx, btn) {
  btn.disabled = true;
  try {
    await api.put_bindings({ scope: ctx.scope, scope_id: ctx.id, catalog_kind: "mcp", catalog_id: s.id, enabled: true });
    status(`${s.name}: on`);
    await ctx.reload();
  } catch (e) { status(e.message, "error"); btn.disabled = false; }
}

// refreshTools lists the login's tools again now.
async function refreshTools(s, login, ctx, btn) {
  btn.disabled = true;
  try {
    const tools = await api.post_mcp_connections_by_id_tools_refresh(login.id);
    status(`${s.name}: ${tools.length} tools listed`);
    await ctx.reload();
  } catch (e) { status(e.message, "error"); btn.disabled = false; }
}

// folderDialog confines a Drive login to one folder that is not My Drive.
async function folderDialog(s, conn, ctx) {
  const body = h("div", { class: "dlg-body" });
  const d = dialog(`${s.name}: choose a folder`, body);
  const list = h("ul", { class: "rows", "aria-live": "polite" });
  const err = h("p", { class: "form-error", role: "alert" });
  const show = async (corpus, parent) => {
    try {
      const folders = await api.get_mcp_connections_by_id_drive_folders(conn.id, { query: { corpus, parent } });
      clear(list, folders.length ? folders.map((f) => h("li", {}, h("strong", {}, f.name), " ", h("span", { class: "muted" }, f.place || ""), " ",
        h("button", { type: "button", class: "small", onclick: () => show(corpus, f.id) }, "Open"), " ",
        h("button", { type: "button", class: "small", onclick: async () => {
          try { await api.put_mcp_connections_by_id_drive_folder(conn.id, { folder_id: f.id }); status(`${s.name} confined to ${f.name}`); d.close(); ctx.reload(); }
          catch (e) { err.textContent = e.message; }
        } }, "Use this folder"))) : h("li", { class: "muted" }, "No folder here."));
    } catch (e) { err.textContent = e.message; }
  };
  body.append(h("p", {}, "Drive tools reach only the folder you choose and what it holds (not My Drive itself)."),
    h("div", { class: "actions" }, [["my", "My Drive"], ["shared", "Shared with me"], ["drives", "Shared drives"]].map(([c, label]) =>
      h("button", { type: "button", class: "small", onclick: () => show(c) }, label))), err, list);
  show("my");
}

// reposDialog picks the repositories a GitHub login works on; the view
// reloads after a save so the dialog opened again starts from the new choice.
async function reposDialog(s, conn, ctx) {
  const body = h("div", { class: "dlg-body" });
  const d = dialog(`${s.name}: repositories`, body);
  let repos;
  try { repos = await api.get_mcp_connections_by_id_github_repositories(conn.id); } catch (e) { body.append(errorBox(e)); return; }
  const chosen = new Set((s.github_repositories || []).map((r) => r.url));
  const boxes = repos.map((r, i) => h("div", { class: "field check" }, h("input", { type: "checkbox", id: "repo-" + i, value: r.url, checked: chosen.has(r.url) }),
    h("label", { for: "repo-" + i }, r.full_name || r.name, r.private ? " (private)" : "")));
  const err = h("p", { class: "form-error", role: "alert" });
  body.append(h("fieldset", {}, h("legend", {}, "Repositories the installation reaches"), boxes), err,
    h("div", { class: "actions" }, h("button", { type: "button", onclick: async () => {
      const pick = repos.filter((r, i) => boxes[i].querySelector("input").checked).map((r) => ({ name: r.name, url: r.url, default_branch: r.default_branch }));
      try { await api.put_mcp_connections_by_id_github_selected(conn.id, { repositories: pick }); status("Repositories saved"); d.close(); ctx.reload(); }
      catch (e) { err.textContent = e.message; }
    } }, "Save repositories")));
}

// coinsDialog edits a connected Pinned prices login's coins.
async function coinsDialog(s, conn) {
  const body = h("div", { class: "dlg-body" });
  const d = dialog(`${s.name}: pinned coins`, body);
  const picker = coinPicker(() => "", conn.id);
  try {
    const cur = await api.get_mcp_connections_by_id_pinned_prices(conn.id);
    picker.set(Array.isArray(cur) ? cur : cur.coins || []);
  } catch (e) { body.append(errorBox(e)); }
  const save = h("button", { type: "button", onclick: async () => {
    try { await api.put_mcp_connections_by_id_pinned_prices(conn.id, { coins: picker.coins() }); status("Coins saved"); d.close(); }
    catch (e) { picker.el.querySelector(":scope > .field-error").textContent = e.message; }
  } }, "Save coins");
  body.append(picker.el, h("div", { class: "actions" }, save));
}

async function showHealth(card, conn, btn) {
  let box = card.querySelector(".health-box");
  if (!box) { box = h("div", { class: "health-box", role: "region", "aria-label": "Connection health" }); card.append(box); }
  btn.disabled = true;
  try {
    const hl = await api.get_mcp_connections_by_id_health(conn.id);
    clear(box, h("dl", {}, h("dt", {}, "State"), h("dd", {}, hl.state || hl.status), h("dt", {}, "Last refresh"), h("dd", {}, when(hl.last_success_at)),
      h("dt", {}, "Last failure"), h("dd", {}, hl.last_failure_at ? `${when(hl.last_failure_at)} (${hl.last_error_code || "error"})` : "—"),
      h("dt", {}, "Next retry"), h("dd", {}, when(hl.next_retry_at)),
      h("dt", {}, "Calls"), h("dd", {}, callsText(hl))));
  } catch (e) { clear(box, errorBox(e)); } finally { btn.disabled = false; }
}

// callsText is the login's circuit breaker in words.
function callsText(hl) {
  const n = hl.failures_in_a_row || 0;
  if (hl.calls === "paused") return h("span", { class: "badge warn" }, `paused until ${when(hl.paused_until)} after ${n} failures in a row`);
  if (hl.calls === "trial_due") return `paused after ${n} failures in a row; the next call is a trial`;
  return n ? `flowing (${n} failed in a row)` : "flowing";
}

function nativeTable(native, ctx) {
  return h("table", { class: "native" }, h("thead", {}, h("tr", {}, h("th", {}, "Tool"), h("th", {}, "Group"), h("th", {}, "Switch"), h("th", {}, "State"))),
    h("tbody", {}, native.map((n) => h("tr", { "data-tool": n.name, id: "native-" + n.name },
      h("td", {}, h("code", {}, n.name)),
      h("td", {}, n.group || n.family || ""),
      h("td", {}, n.is_binding ? switch3(`${n.name} at this ${ctx.scope}`, n.switch, (v) => writeSwitch(ctx, "native_tool", n.name, v)) :
        h("span", { class: "muted" }, n.gate && n.gate !== "always" ? `follows the agent's ${n.gate} flag` : "always on")),
      h("td", {}, n.is_binding ? [n.enabled ? "On" : "Off", " ", decided(n.decided_by), " "] : null, asks(n.approval), " ",
        n.not_offered && n.not_offered !== "turned off" ? h("span", { class: "badge warn" }, "not offered: " + n.not_offered,
          (n.missing_variables || []).length ? [" (set ", n.missing_variables.map((v, i) => [i ? ", " : "", h("code", {}, v)]), ")"] : null) :
          (!n.is_binding ? (n.offered === false ? "Off" : "On") : null))))));
}

export { showProblems };

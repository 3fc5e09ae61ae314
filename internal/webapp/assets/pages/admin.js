// Admin: the Connector catalog (list, edit copy and URLs, add, delete) and
// Platform keys (every integration, its state and variables, never values).
import * as api from "../api.gen.js";
import { h, clear, form, tabs, status, errorBox } from "../ui.js";
import { setTab, app } from "../state.js";
import { pricesPanel } from "./prices.js";
import { auditPanel } from "./audit.js";

export async function adminPage(main) {
  main.append(h("h1", {}, "Admin"));
  if (!app.me?.admin) { main.append(h("p", {}, "Only an instance admin sees this page.")); return; }
  const tab = new URLSearchParams(location.search).get("tab");
  main.append(tabs([
    { id: "catalog", label: "Connector catalog", render: catalogPanel },
    { id: "keys", label: "Platform keys", render: keysPanel },
    { id: "prices", label: "Model prices", render: pricesPanel },
    { id: "audit", label: "Audit", render: (p) => auditPanel(p, null) },
    { id: "users", label: "Users", render: usersPanel },
  ], tab, setTab));
}

async function catalogPanel(panel) {
  const rows = await api.get_admin_mcp_servers();
  const list = h("ul", { class: "servers", id: "catalog" });
  for (const r of rows) {
    const edit = h("details", {}, h("summary", {}, "Edit"), form({
      label: `Edit ${r.name}`, submit: "Save",
      fields: [{ name: "name", label: "Name", value: r.name }, { name: "url", label: "URL", value: r.url },
        { name: "description", label: "Description", type: "textarea", value: r.description },
        { name: "limitations", label: "Limitations", type: "textarea", value: r.limitations },
        { name: "setup_hint", label: "Setup hint", type: "textarea", value: r.setup_hint },
        { name: "published", label: "Published", type: "checkbox", value: r.published }],
      onSubmit: async (v) => { await api.patch_admin_mcp_servers_by_id(r.id, v); status(`${v.name} saved`); clear(panel); catalogPanel(panel); },
    }), h("button", { type: "button", class: "danger", onclick: async () => {
      if (!confirm(`Delete ${r.name} with its connections and bindings?`)) return;
      await api.delete_admin_mcp_servers_by_id(r.id); status(`${r.name} deleted`); clear(panel); catalogPanel(panel);
    } }, "Delete"));
    list.append(h("li", { class: "server", "data-slug": r.slug }, h("div", { class: "server-head" }, h("h3", {}, r.name),
      h("span", { class: "muted" }, `${r.slug} · ${r.kind} · ${r.transport} / ${r.auth}`),
      r.published ? h("span", { class: "badge" }, "published") : h("span", { class: "badge warn" }, "unpublished"),
      r.copy_source === "admin" ? h("span", { class: "badge" }, "edited") : null,
      !r.available ? h("span", { class: "badge warn" }, "Not set up: " + (r.missing_variables || []).join(", ")) : null),
    h("p", { class: "muted" }, r.url), edit));
  }
  panel.append(h("h2", {}, "Connector catalog"), list, h("h2", {}, "Add a server"), form({
    label: "Add a catalog server", submit: "Add server",
    fields: [{ name: "slug", label: "Slug", required: true }, { name: "name", label: "Name", required: true },
      { name: "url", label: "URL", type: "url", placeholder: "https://…" },
      { name: "auth", label: "Auth", type: "select", options: ["none", "token", "oauth"] },
      { name: "transport", label: "Transport", type: "select", options: ["http", "sse", "stdio"] },
      { name: "description", label: "Description", type: "textarea" }, { name: "published", label: "Published", type: "checkbox" }],
    onSubmit: async (v) => { await api.post_admin_mcp_servers(v); status(`${v.name} added`); clear(panel); catalogPanel(panel); },
  }));
}

// usersPanel lists every user with their organisations; a new operator's
// token is shown once, and disabling asks first.
async function usersPanel(panel) {
  try {
    const [users, orgs] = await Promise.all([api.get_users(), api.get_orgs()]);
    const redraw = () => { clear(panel); usersPanel(panel); };
    panel.append(h("h2", {}, "Users"), h("table", { id: "users" },
      h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "Organisations"), h("th", {}, "State"), h("th", {}, ""))),
      h("tbody", {}, users.map((u) => h("tr", {},
        h("td", {}, h("strong", {}, u.name), u.email ? h("span", { class: "muted" }, " ", u.email) : null, u.instance_admin ? h("span", { class: "badge" }, "instance admin") : null),
        h("td", {}, u.organisations.length ? u.organisations.map((o) => o.name).join(", ") : h("span", { class: "muted" }, "none")),
        h("td", {}, u.disabled_at ? h("span", { class: "badge warn" }, "disabled") : "active"),
        h("td", {}, u.id === app.me?.user_id ? h("span", { class: "muted" }, "you") : h("button", { type: "button", class: u.disabled_at ? "small" : "danger small", onclick: async () => {
          if (u.disabled_at) { await api.post_users_by_id_enable(u.id); status(`${u.name} enabled`); return redraw(); }
          if (!confirm(`Disable ${u.name}? Every token of theirs is refused until you enable them again.`)) return;
          await api.post_users_by_id_disable(u.id); status(`${u.name} disabled`); redraw();
        } }, u.disabled_at ? `Enable ${u.name}` : `Disable ${u.name}`)))))));
    const minted = h("div", { id: "user-token", "aria-live": "polite" });
    panel.append(h("h2", {}, "Add an operator"), form({
      label: "Add an operator", submit: "Add operator",
      fields: [{ name: "name", label: "Name", required: true }, { name: "email", label: "Email", type: "email" },
        { name: "organisation_id", label: "Organisation", type: "select", options: [{ value: "", label: "(none yet)" }, ...orgs.map((o) => ({ value: o.id, label: o.name }))] }],
      onSubmit: async (v) => {
        const r = await api.post_users(v);
        clear(panel); await usersPanel(panel);
        panel.append(minted);
        clear(minted, h("p", {}, `${r.user.name}'s API token, shown once: give it to them to sign in.`), h("code", { class: "token" }, r.token));
      },
    }));
  } catch (e) { panel.append(errorBox(e)); }
}

async function keysPanel(panel) {
  try {
    const inst = await api.get_instance();
    panel.append(h("h2", {}, "Platform keys"), h("p", { class: "muted" }, "What the box's environment holds: which variables are set, never their values. Set them where guilds runs and restart it."),
      h("table", { id: "integrations" }, h("thead", {}, h("tr", {}, h("th", {}, "Integration"), h("th", {}, "State"), h("th", {}, "Variables"), h("th", {}, "Switches on"))),
        h("tbody", {}, inst.integrations.map((i) => h("tr", {},
          h("td", {}, h("strong", {}, i.name), i.summary ? h("p", { class: "muted" }, i.summary) : null),
          h("td", {}, h("span", { class: "badge " + (i.state === "configured" || i.state === "on" ? "connected" : "warn") }, i.state)),
          h("td", {}, (i.variables || []).map((v) => {
            const name = typeof v === "string" ? v : v.name;
            const missing = (i.missing || []).includes(name) || (typeof v === "object" && v.set === false);
            return h("div", {}, h("code", {}, name), " ", missing ? h("span", { class: "muted" }, "not set") : "set");
          })),
          h("td", {}, switchesOn(i.switches_on)))))));
    panel.append(githubCheck());
  } catch (e) { panel.append(errorBox(e)); }
}

// githubCheck reads the box's GitHub App back from GitHub and lists what
// differs from docs/github-app.md.
function githubCheck() {
  const out = h("div", { id: "github-check", "aria-live": "polite" });
  const run = async (ev) => {
    ev.target.disabled = true;
    try {
      const r = await api.get_admin_github_app();
      clear(out, h("p", { class: "badge " + (r.ok ? "connected" : "warn") }, r.ok ? "The App's registration is as the box needs" : "The App's registration differs"),
        r.problems.length ? h("ul", { class: "problems" }, r.problems.map((p) => h("li", {}, h("code", {}, p.field), " ", p.message))) : null,
        r.confirm?.length ? h("div", {}, h("p", {}, "GitHub does not show these; confirm them on the App's settings page:"),
          h("ul", {}, r.confirm.map((c) => h("li", {}, c)))) : null);
    } catch (e) { clear(out, errorBox(e)); }
    ev.target.disabled = false;
  };
  return h("section", {}, h("h2", {}, "GitHub App"),
    h("p", { class: "muted" }, "Reads the App's settings from GitHub with its key and says what to change (see docs/github-app.md)."),
    h("button", { type: "button", id: "check-github-app", onclick: run }, "Check the GitHub App"), out);
}

function switchesOn(s = {}) {
  const parts = [];
  for (const [k, label] of [["model_providers", "models"], ["native_tools", "tools"], ["connectors", "connectors"], ["features", "features"]]) {
    if (s[k]?.length) parts.push(`${label}: ${s[k].join(", ")}`);
  }
  return parts.join("; ");
}

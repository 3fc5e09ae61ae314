import * as api from "../api.gen.js";
import { h, clear, form, tabs, status, errorBox, when } from "../ui.js";
import { navigate, setTab, app } from "../state.js";
import { toolsView } from "./tools.js";
import { notesPanel, secretsPanel } from "./parts.js";
import { budgetsPanel } from "./budgets.js";
import { runList } from "./runlist.js";

// agentFields: name, the model picker (a provider without a key reads
// "No key yet"), prompt and the agent's flags.
export async function agentFields(orgID, a = {}) {
  const providers = await api.get_orgs_by_id_model_providers(orgID).catch(() => []);
  const [prov, name] = splitModel(a.model || "", providers);
  const cfg = a.config || {};
  return [
    { name: "name", label: "Name", value: a.name || "", required: true },
    { name: "provider", label: "Model provider", type: "select", value: prov,
      options: [{ value: "", label: "(the box's default)" }, ...providers.map((p) => ({ value: p.provider, label: p.has_key ? p.provider : `${p.provider} — No key yet` }))] },
    { name: "model", label: "Model", value: name, help: "The provider's model name, like claude-sonnet-4-5; empty for the provider's default." },
    { name: "prompt", label: "Prompt", type: "textarea", value: a.prompt || "" },
    h("fieldset", {}, h("legend", {}, "Capabilities"),
      h("div", { class: "flags" }, ["browser", "coding", "scripting", "memory"].map((f) => flag(f, cfg[f]))),
      numberField("max_scripts", "Max scripts", cfg.max_scripts ?? 0)),
  ];
}

function flag(name, on) {
  const id = "flag-" + name;
  return h("div", { class: "field check", "data-field": name }, h("input", { type: "checkbox", id, name, checked: !!on }),
    h("label", { for: id }, name[0].toUpperCase() + name.slice(1)), h("p", { class: "field-error", "aria-live": "polite" }));
}

function numberField(name, label, value) {
  const id = "num-" + name;
  return h("div", { class: "field", "data-field": name }, h("label", { for: id }, label),
    h("input", { type: "number", id, name, value: String(value), min: "0", max: "1000", step: "1", "aria-describedby": id + "-err" }),
    h("p", { class: "field-error", id: id + "-err", "aria-live": "polite" }));
}

// splitModel mirrors models.Split: a provider's name alone is that provider
// with its default model.
function splitModel(model, providers) {
  if (providers.some((p) => p.provider === model)) return [model, ""];
  const i = model.indexOf("/");
  if (i > 0 && providers.some((p) => p.provider === model.slice(0, i))) return [model.slice(0, i), model.slice(i + 1)];
  return ["", model];
}

export function agentBody(v) {
  const model = v.provider ? (v.model ? `${v.provider}/${v.model}` : v.provider + "/") : (v.model || "");
  return { name: v.name, model: model.endsWith("/") ? model.slice(0, -1) : model, prompt: v.prompt,
    config: { browser: v.browser, coding: v.coding, scripting: v.scripting, memory: v.memory, max_scripts: v.max_scripts } };
}

export async function agentPage(main, id) {
  const agent = await api.get_agents_by_id(id);
  const guild = await api.get_guilds_by_id(agent.guild_id).catch(() => ({ id: agent.guild_id, name: "Guild" }));
  const title = h("h1", {}, agent.name);
  main.append(h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "/" }, "Organisations"), " / ",
    h("a", { href: `/guilds/${guild.id}` }, guild.name), " / ", agent.name), title);
  const tab = new URLSearchParams(location.search).get("tab");
  main.append(tabs([
    { id: "settings", label: "Settings", render: async (p) => p.append(form({
      label: "Agent settings", submit: "Save agent",
      fields: await agentFields(agent.organisation_id, agent),
      onSubmit: async (v) => { const a = await api.patch_agents_by_id(id, agentBody(v)); title.textContent = a.name; status("Agent saved"); },
    }), h("button", { type: "button", class: "danger", onclick: async () => {
      if (!confirm(`Delete ${agent.name}?`)) return;
      await api.delete_agents_by_id(id); status("Agent deleted"); navigate(`/guilds/${guild.id}`);
    } }, "Delete agent"), h("button", { type: "button", onclick: async () => {
      await api.post_agents_by_id_workspace_stop(id); status("Sandbox stop sent: its background commands end; the home is kept");
    } }, "Stop sandbox"), h("button", { type: "button", class: "danger", onclick: async () => {
      if (!confirm(`Erase everything ${agent.name} keeps in /home/agent?`)) return;
      await api.post_agents_by_id_workspace_reset(id); status("Sandbox reset sent: the home is erased");
    } }, "Reset home")) },
    { id: "tools", label: "Tools", render: (p) => toolsView(p, "agent", id) },
    { id: "budgets", label: "Budgets", render: (p) => budgetsPanel(p, "agent", id) },
    { id: "runs", label: "Runs", render: (p) => runsPanel(p, agent) },
    { id: "memory", label: "Memory", render: (p) => memoryPanel(p, agent) },
    { id: "notes", label: "Notes", render: (p) => notesPanel(p, "agent", id) },
    { id: "secrets", label: "Secrets", render: (p) => secretsPanel(p, "agent", id) },
    { id: "schedules", label: "Schedules", render: (p) => schedulesPanel(p, agent) },
  ], tab || "settings", setTab));
}

async function runsPanel(panel, agent) {
  panel.append(h("h2", {}, "Start a run"), form({
    label: "Start a run", submit: "Start run",
    fields: [{ name: "message", label: "Message", type: "textarea", rows: 3, required: true },
      { name: "budget", label: "Tool call budget (optional)", type: "number", min: "1" }],
    onSubmit: async (v) => { const r = await api.post_agents_by_id_runs(agent.id, { message: v.message, budget: v.budget, trigger: "direct" }); navigate(`/runs/${r.id}`); },
  }));
  if (app.instance?.no_model_key) panel.prepend(h("p", { class: "badge warn" }, "No model key is set: a run cannot start."));
  await runList(panel, { label: "Runs", load: (query) => api.get_agents_by_id_runs(agent.id, { query }) });
}

async function memoryPanel(panel, agent) {
  try {
    const m = await api.get_agents_by_id_memory(agent.id);
    panel.append(h("h2", {}, "Memory"), form({
      label: "Memory", submit: "Save memory",
      fields: [{ name: "content", label: "What the agent remembers", type: "textarea", rows: 10, value: m.content }],
      onSubmit: async (v) => { await api.put_agents_by_id_memory(agent.id, { content: v.content }); status("Memory saved"); },
    }), h("p", { class: "muted" }, "Last written " + when(m.updated_at)));
  } catch (e) { panel.append(errorBox(e)); }
}

async function schedulesPanel(panel, agent) {
  const list = h("ul", { class: "rows" });
  const reload = async () => {
    const ss = await api.get_agents_by_id_schedules(agent.id);
    clear(list, ss.length ? ss.map((s) => h("li", {}, h("strong", {}, s.description || s.instruction), " ",
      h("span", { class: "muted" }, `${s.kind} ${s.cron ? s.cron + " (UTC)" : s.start || ""} · ${s.state} · next ${when(s.next_run_at)}`), " ",
      h("button", { type: "button", class: "small", onclick: async () => { await (s.paused ? api.post_schedules_by_id_resume(s.id) : api.post_schedules_by_id_pause(s.id)); reload(); } }, s.paused ? "Resume" : "Pause"), " ",
      h("button", { type: "button", class: "small", onclick: async () => { await api.post_schedules_by_id_trigger(s.id); status("Triggered"); } }, "Run now"), " ",
      h("button", { type: "button", class: "small danger", onclick: async () => { if (!confirm(`Delete the schedule "${s.description || s.instruction}"? Its future runs will not happen.`)) return; await api.delete_schedules_by_id(s.id); reload(); } }, "Delete"))) :
      h("li", { class: "muted" }, "No schedule: agents create them with their schedule tools."));
  };
  panel.append(h("h2", {}, "Schedules"), list);
  await reload().catch((e) => panel.append(errorBox(e)));
}

import * as api from "../api.gen.js";
import { h, clear, form, tabs, status, errorBox, when } from "../ui.js";
import { navigate, setTab, onLeave } from "../state.js";
import { toolsView } from "./tools.js";
import { renameForm, notesPanel, secretsPanel } from "./parts.js";
import { agentFields, agentBody } from "./agent.js";
import { budgetsPanel } from "./budgets.js";
import { runList } from "./runlist.js";

export async function guildPage(main, id) {
  const guild = await api.get_guilds_by_id(id);
  const org = await api.get_orgs_by_id(guild.organisation_id).catch(() => ({ id: guild.organisation_id, name: "Organisation" }));
  const title = h("h1", {}, guild.name);
  main.append(h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "/" }, "Organisations"), " / ",
    h("a", { href: `/orgs/${org.id}` }, org.name), " / ", guild.name), title);
  const tab = new URLSearchParams(location.search).get("tab");
  main.append(tabs([
    { id: "agents", label: "Agents", render: (p) => agentsPanel(p, guild) },
    { id: "tools", label: "Tools", render: (p) => toolsView(p, "guild", id) },
    { id: "runs", label: "Runs", render: async (p) => runList(p, { label: "Runs",
      agents: await api.get_guilds_by_id_agents(id), load: (query) => api.get_guilds_by_id_runs(id, { query }) }) },
    { id: "issues", label: "Issues", render: (p) => issuesPanel(p, guild) },
    { id: "chat", label: "Group chat", render: (p) => chatPanel(p, guild) },
    { id: "repos", label: "Repositories", render: (p) => reposPanel(p, guild) },
    { id: "budgets", label: "Budgets", render: (p) => budgetsPanel(p, "guild", id) },
    { id: "notes", label: "Notes", render: (p) => notesPanel(p, "guild", id) },
    { id: "secrets", label: "Secrets", render: (p) => secretsPanel(p, "guild", id) },
    { id: "settings", label: "Settings", render: (p) => p.append(
      renameForm(guild.name, async (name) => { const g = await api.patch_guilds_by_id(id, { name }); title.textContent = g.name; }),
      h("button", { type: "button", class: "danger", onclick: async () => {
        if (!confirm(`Delete ${guild.name} with its agents?`)) return;
        await api.delete_guilds_by_id(id); status("Guild deleted"); navigate(`/orgs/${org.id}`);
      } }, "Delete guild")) },
  ], tab, setTab));
}

async function agentsPanel(panel, guild) {
  const agents = await api.get_guilds_by_id_agents(guild.id);
  panel.append(h("h2", {}, "Agents"), h("ul", { class: "rows", id: "agents" }, agents.length ? agents.map((a) =>
    h("li", {}, h("a", { href: `/agents/${a.id}` }, a.name), " ", h("span", { class: "muted" }, a.model || ""))) : h("li", { class: "muted" }, "No agent yet.")),
  h("h3", {}, "New agent"), form({
    label: "New agent", submit: "Create agent",
    fields: await agentFields(guild.organisation_id, { config: { max_scripts: 0 } }),
    onSubmit: async (v) => { const a = await api.post_guilds_by_id_agents(guild.id, agentBody(v)); status(`Created ${a.name}`); navigate(`/agents/${a.id}`); },
  }));
}

export async function issuesPanel(panel, guild) {
  const state = new URLSearchParams(location.search).get("status") || "open";
  const list = h("ul", { class: "rows", id: "issues" });
  const reload = async () => {
    const issues = await api.get_guilds_by_id_issues(guild.id, { query: { status: state } });
    clear(list, issues.length ? issues.map((i) => h("li", { class: "issue" },
      h("details", {}, h("summary", {}, h("span", { class: "badge" }, i.kind), " ", i.summary),
        h("pre", { class: "wrap" }, i.detail || ""), i.run_id ? h("a", { href: `/runs/${i.run_id}` }, "The run that filed it") : null),
      h("a", { href: `/issues/${i.id}/studio` }, "Investigate in Studio"), " ",
      h("span", { class: "muted" }, when(i.created_at)), " ",
      i.status === "open" ? h("button", { type: "button", class: "small", onclick: async () => {
        await api.post_issues_by_id_resolve(i.id); status("Issue resolved"); reload();
      } }, "Resolve") : h("span", { class: "muted" }, "resolved " + when(i.resolved_at)))) :
      h("li", { class: "muted" }, state === "open" ? "No open issue." : "No issue."));
  };
  panel.append(h("h2", {}, "Issues"), h("p", {}, h("a", { href: `?tab=issues&status=open` }, "Open"), " · ", h("a", { href: `?tab=issues&status=resolved` }, "Resolved")),
    h("button", { type: "button", id: "resolve-all", onclick: async () => {
      const r = await api.post_guilds_by_id_issues_resolve_all(guild.id); status(`${r.resolved} issue(s) resolved`); reload();
    } }, "Resolve all"), list);
  await reload();
}

// chatPanel: the guild's group chat, live (the chat's event stream), each
// agent's reply linked to the run that wrote it, with the agents one can @mention.
async function chatPanel(panel, guild) {
  const list = h("ol", { class: "chat", id: "chat", "aria-live": "polite" });
  const empty = h("p", { class: "muted", id: "chat-empty" }, "No message yet. Post one below: an agent you @mention answers, or the guild's responders if you mention none.");
  const seen = new Set();
  let last = 0;
  const add = (m) => {
    if (seen.has(m.seq)) return;
    seen.add(m.seq);
    last = Math.max(last, m.seq);
    empty.hidden = true;
    list.append(h("li", { "data-seq": m.seq }, h("strong", {}, m.author?.name || m.author?.kind || "?"), ": ", m.content, " ",
      h("span", { class: "muted" }, when(m.created_at)),
      m.run_id ? [" · ", h("a", { href: `/runs/${m.run_id}` }, "its run")] : null));
  };
  const agents = await api.get_guilds_by_id_chat_responders(guild.id).catch(() => []);
  const post = form({
    label: "Post to the guild", submit: "Post",
    fields: [{ name: "message", label: "Message", type: "textarea", rows: 2, required: true, help: "Mention an agent with @name." }],
    onSubmit: async (v, f) => { const r = await api.post_guilds_by_id_chat_messages(guild.id, { message: v.message }); if (r.notice) status(r.notice); f.reset(); },
  });
  const mention = (name) => {
    const box = post.elements.message;
    box.value = (box.value ? box.value.replace(/\s*$/, " ") : "") + "@" + name + " ";
    box.focus();
  };
  panel.append(h("h2", {}, "Group chat"), empty, list,
    agents.length ? h("p", { class: "mentions" }, "Mention: ", agents.map((a) => [h("button", { type: "button", class: "small link", onclick: () => mention(a.name) }, "@" + a.name), " "]),
      agents.some((a) => a.responder) ? h("span", { class: "muted" }, ` · answering unaddressed messages: ${agents.filter((a) => a.responder).map((a) => a.name).join(", ")}`) : null) :
      h("p", { class: "muted" }, "This guild has no agent yet: add one on the Agents tab to have someone to talk to."),
    post);
  try {
    const r = await api.get_guilds_by_id_chat_messages(guild.id);
    (r.messages || []).forEach(add);
  } catch (e) { panel.append(errorBox(e)); return; }
  const es = new EventSource(`/api/guilds/${encodeURIComponent(guild.id)}/chat/events?after=${last}`);
  es.addEventListener("message", (ev) => { if (!list.isConnected) { es.close(); return; } add(JSON.parse(ev.data)); });
  onLeave(() => es.close());
}

async function reposPanel(panel, guild) {
  try {
    const r = await api.get_guilds_by_id_repositories(guild.id);
    const reload = () => { clear(panel); reposPanel(panel, guild); };
    panel.append(h("h2", {}, "Repositories"), h("ul", { class: "rows", id: "repositories" }, (r.repositories || []).length ? r.repositories.map((x) =>
      h("li", {}, x.name, " ", h("span", { class: "muted" }, x.url), " ", x.connection_id ? h("span", { class: "muted" }, "(GitHub login)")
        : h("button", { type: "button", class: "small danger", "aria-label": `Remove ${x.name}`, onclick: async () => {
          if (!confirm(`Remove ${x.name} from this guild's repositories?`)) return;
          try { await api.delete_guilds_by_id_repositories_by_repo(guild.id, x.id); status(`${x.name} removed`); reload(); }
          catch (e) { status(e.message, "error"); }
        } }, "Remove"))) : h("li", { class: "muted" }, "No repository.")),
    h("h3", {}, "Add a git URL"), form({
      label: "Add a git URL", submit: "Add repository",
      fields: [{ name: "url", label: "Clone URL", type: "url", placeholder: "https://host/owner/repo.git", required: true },
        { name: "name", label: "Name (default: from the URL)" }, { name: "default_branch", label: "Default branch" }],
      onSubmit: async (v) => { const g = await api.post_guilds_by_id_repositories(guild.id, v); status(`${g.name} added`); reload(); },
    }),
    h("h3", {}, "GitHub logins"), h("ul", { class: "rows" }, (r.github_logins || []).map((l) =>
      h("li", {}, `${l.account_hint || "GitHub"} (${l.owner_scope}, ${l.status})`, (l.repositories || []).length ? ": " + l.repositories.map((x) => x.name).join(", ") : ""))),
    h("p", { class: "muted" }, "Connect GitHub on the Tools tab, then pick its repositories there."));
  } catch (e) { panel.append(errorBox(e)); }
}

// The guild builder: the operator describes a guild's job, the coach (a
// model with builder tools) drafts agents, prompts and tool switches, the
// operator edits the draft and creates all of it in one step.
import * as api from "../api.gen.js";
import { h, clear, status, showProblems, clearProblems, nextId } from "../ui.js";
import { navigate } from "../state.js";

export async function builderPage(main, orgId) {
  const [org, servers] = await Promise.all([api.get_orgs_by_id(orgId), api.get_mcp_servers()]);
  // The builder names only published servers with published tools.
  const published = servers.filter((s) => s.published && s.tools?.length);
  main.append(h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "/" }, "Organisations"), " / ",
    h("a", { href: `/orgs/${orgId}` }, org.name), " / Guild builder"),
  h("h1", {}, "Guild builder"),
  h("p", { class: "muted" }, "Describe the job. The coach looks at the published servers, this organisation's logins and its Notion, and drafts the agents; you edit the draft, then create everything at once."));
  const draftHolder = h("section", { id: "draft", "aria-live": "polite" });
  const job = h("textarea", { id: "builder-job", name: "job", rows: 5, "aria-describedby": "builder-job-err" });
  const jobErr = h("p", { class: "form-error", role: "alert", id: "builder-job-err" });
  const ask = h("button", { type: "submit" }, "Ask the coach");
  const jobForm = h("form", { class: "form", "aria-label": "The guild's job" },
    h("div", { class: "field", "data-field": "job" }, h("label", { for: "builder-job" }, "What should this guild do?"), job, h("p", { class: "field-error" })),
    jobErr, h("div", { class: "actions" }, ask,
      h("button", { type: "button", class: "link", onclick: () => edit(draftHolder, orgId, published, blank(), []) }, "Start from an empty draft")));
  jobForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearProblems(jobForm);
    ask.disabled = true;
    status("The coach is drafting…");
    try {
      const advice = await api.post_orgs_by_id_builder_coach(orgId, { job: job.value });
      status("The coach proposed a draft");
      edit(draftHolder, orgId, published, advice.proposal, advice.steps, advice.model);
    } catch (e) { showProblems(jobForm, e); } finally { ask.disabled = false; }
  });
  main.append(jobForm, draftHolder);
}

const blank = () => ({ guild: { name: "", description: "" }, agents: [{ name: "", prompt: "", switches: [] }], switches: [] });

// edit draws the draft as a form the operator changes in place.
function edit(holder, orgId, published, draft, steps, model, first = true) {
  draft.switches ||= [];
  for (const a of draft.agents) a.switches ||= [];
  const redraw = () => edit(holder, orgId, published, draft, steps, model, false);
  const text = (label, get, set, opts = {}) => {
    const id = nextId("b");
    const input = opts.area ? h("textarea", { id, rows: opts.rows || 5 }) : h("input", { id, type: "text" });
    input.value = get() || "";
    input.addEventListener("input", () => set(input.value));
    return h("div", { class: "field", "data-field": opts.field }, h("label", { for: id }, label), input, h("p", { class: "field-error" }));
  };
  const err = h("p", { class: "form-error", role: "alert" });
  const create = h("button", { type: "submit" }, "Create the guild");
  const f = h("form", { class: "form", "aria-label": "Draft guild" },
    h("h2", { tabindex: "-1", id: "draft-heading" }, "Draft"),
    model ? h("p", { class: "muted" }, `Drafted by the coach (${model}). Nothing is created until you press Create the guild.`) : null,
    draft.why ? h("p", { id: "coach-why" }, draft.why) : null,
    steps.length ? h("details", { id: "coach-steps" }, h("summary", {}, `What the coach looked at (${steps.length})`),
      h("ul", { class: "rows" }, steps.map((s) => h("li", {}, h("code", {}, s.tool), s.arguments && s.arguments !== "{}" ? " " + s.arguments : "",
        h("pre", { class: "wrap" }, s.result))))) : null,
    text("Guild name", () => draft.guild.name, (v) => { draft.guild.name = v; }, { field: "guild.name" }),
    text("Guild description", () => draft.guild.description, (v) => { draft.guild.description = v; }, { field: "guild.description", area: true, rows: 2 }),
    h("fieldset", { "data-field": "switches" }, h("legend", {}, "Switches for every agent of the guild"),
      switches(draft.switches, published, redraw), h("p", { class: "field-error" })),
    h("div", { "data-field": "agents" }, h("p", { class: "field-error" })),
    draft.agents.map((a, i) => h("fieldset", { class: "agent-draft" }, h("legend", {}, `Agent ${i + 1}${a.name ? ": " + a.name : ""}`),
      text("Name", () => a.name, (v) => { a.name = v; }, { field: `agents.${i}.name` }),
      text("Prompt", () => a.prompt, (v) => { a.prompt = v; }, { field: `agents.${i}.prompt`, area: true, rows: 6 }),
      h("div", { "data-field": `agents.${i}.switches` }, h("h3", {}, "This agent's switches"), switches(a.switches, published, redraw), h("p", { class: "field-error" })),
      draft.agents.length > 1 ? h("button", { type: "button", class: "danger", onclick: () => { draft.agents.splice(i, 1); redraw(); } }, `Remove agent ${a.name || i + 1}`) : null)),
    h("p", {}, h("button", { type: "button", onclick: () => { draft.agents.push({ name: "", prompt: "", switches: [] }); redraw(); } }, "Add an agent")),
    err, h("div", { class: "actions" }, create));
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearProblems(f);
    create.disabled = true;
    try {
      const { why: _why, ...body } = draft;
      const made = await api.post_orgs_by_id_builder_accept(orgId, body);
      status(`Created ${made.guild.name} with ${made.agents.length} agent(s)`);
      navigate(`/guilds/${made.guild.id}`);
    } catch (e) { showProblems(f, e); } finally { create.disabled = false; }
  });
  clear(holder, f);
  if (first) f.querySelector("#draft-heading").focus();
}

// switches lists switches with their state and a row to add one.
function switches(list, published, redraw) {
  const name = (s) => {
    const srv = published.find((p) => p.slug === s.server);
    return (srv ? srv.name : s.server) + (s.tool ? " · " + s.tool : " (every tool)");
  };
  const rows = h("ul", { class: "rows switches" }, list.length ? list.map((s, i) => {
    const id = nextId("sw");
    const box = h("input", { type: "checkbox", id, checked: s.on, onchange: (ev) => { s.on = ev.target.checked; } });
    return h("li", {}, box, h("label", { for: id }, " On: ", name(s)), " ",
      h("button", { type: "button", class: "small", "aria-label": `Remove the switch ${name(s)}`, onclick: () => { list.splice(i, 1); redraw(); } }, "Remove"));
  }) : h("li", { class: "muted" }, "No switch: inherits the organisation's."));
  if (!published.length) return [rows, h("p", { class: "muted" }, "No published server publishes tools yet.")];
  const srvID = nextId("srv"), toolID = nextId("tool");
  const srv = h("select", { id: srvID }, published.map((p) => h("option", { value: p.slug }, p.name)));
  const tool = h("select", { id: toolID });
  const fill = () => {
    const p = published.find((x) => x.slug === srv.value);
    clear(tool, h("option", { value: "" }, "Every tool"), (p?.tools || []).map((t) => h("option", { value: t.name }, t.name)));
  };
  srv.onchange = fill;
  fill();
  return [rows, h("div", { class: "add-switch" }, h("label", { for: srvID }, "Server "), srv, " ", h("label", { for: toolID }, "Tool "), tool, " ",
    h("button", { type: "button", onclick: () => { list.push({ server: srv.value, tool: tool.value || undefined, on: true }); redraw(); } }, "Add the switch"))];
}

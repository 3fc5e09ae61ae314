// An organisation's collections: typed tables the operator defines, alters
// and grants to guilds and agents; their records, added from a form of the
// collection's columns.
import * as api from "../api.gen.js";
import { h, clear, form, status, errorBox, when } from "../ui.js";
import { columnsEditor } from "./columns.js";

export async function collectionsPanel(panel, org) {
  const list = h("div", { id: "collections" });
  panel.append(h("h2", {}, "Collections"), list);
  let cols;
  try { cols = await api.get_orgs_by_id_collections(org.id); } catch (e) { list.append(errorBox(e)); return; }
  const subjects = await grantSubjects(org.id);
  const again = () => { clear(panel); collectionsPanel(panel, org); };
  if (!cols.length) list.append(h("p", { class: "muted", id: "collections-empty" }, "No collection yet. Define one below, then grant it to a guild or an agent: their runs read (or write) its records."));
  const editor = columnsEditor([]);
  panel.append(h("h3", {}, "Define a collection"), form({
    label: "Define a collection", submit: "Define collection",
    fields: [{ name: "name", label: "Name", required: true, help: "Lower-case letters, digits and _, like customers." },
      { name: "description", label: "Description", type: "textarea" }, editor.el],
    onSubmit: async (v) => {
      await api.post_orgs_by_id_collections(org.id, { name: v.name, description: v.description, columns: editor.value() });
      status(`Collection ${v.name} defined`); again();
    },
  }));
  for (const c of cols) {
    const body = h("div", {});
    const d = h("details", { class: "collection", "data-collection": c.name }, h("summary", {}, h("strong", {}, c.name), " ",
      h("span", { class: "muted" }, (c.columns || []).map((x) => `${x.name}: ${x.type}`).join(", "))), body);
    d.addEventListener("toggle", () => {
      if (!d.open || body.childElementCount) return;
      body.append(c.description ? h("p", {}, c.description) : null);
      const recs = h("section", { "aria-label": `Records of ${c.name}` });
      const grants = h("section", { "aria-label": `Grants of ${c.name}` });
      body.append(h("h3", {}, "Records"), recs, h("h3", {}, "Who may use it"), grants, h("h3", {}, "Change it"), alterForm(c, again),
        h("div", { class: "actions" }, h("button", { type: "button", class: "danger", onclick: async () => {
          if (!confirm(`Delete the collection ${c.name} with all its records? Agents granted it lose it.`)) return;
          try { await api.delete_collections_by_id(c.id); status(`Collection ${c.name} deleted`); again(); } catch (e) { status(e.message, "error"); }
        } }, `Delete ${c.name}`)));
      records(recs, c);
      grantsPart(grants, c, subjects);
    });
    list.append(d);
  }
}

// alterForm renames, describes or re-declares the columns; the API checks
// the records already kept against the new columns and says which fail.
function alterForm(c, again) {
  const editor = columnsEditor(c.columns || []);
  return form({
    label: `Change ${c.name}`, submit: "Save changes",
    fields: [{ name: "name", label: "Name", value: c.name, required: true }, { name: "description", label: "Description", type: "textarea", value: c.description }, editor.el],
    onSubmit: async (v) => {
      await api.patch_collections_by_id(c.id, { name: v.name, description: v.description, columns: editor.value() });
      status(`Collection ${v.name} saved`); again();
    },
  });
}

// grantSubjects: the organisation's guilds and their agents, by id.
async function grantSubjects(orgID) {
  const out = new Map();
  const guilds = await api.get_orgs_by_id_guilds(orgID).catch(() => []);
  await Promise.all(guilds.map(async (g) => {
    out.set(g.id, { value: "guild:" + g.id, label: `Guild ${g.name}` });
    for (const a of await api.get_guilds_by_id_agents(g.id).catch(() => [])) out.set(a.id, { value: "agent:" + a.id, label: `Agent ${a.name} (${g.name})` });
  }));
  return out;
}

const accessWords = { read: "reads its records", write: "reads and writes its records", none: "is refused it" };

function grantsPart(box, c, subjects) {
  const list = h("ul", { class: "rows" });
  const reload = async () => {
    try {
      const gs = await api.get_collections_by_id_grants(c.id);
      clear(list, gs.length ? gs.map((g) => {
        const id = g.guild_id || g.agent_id;
        const who = subjects.get(id)?.label || (g.guild_id ? "A guild" : "An agent");
        return h("li", {}, `${who} ${accessWords[g.access] || g.access}`, " ",
          h("button", { type: "button", class: "small danger", onclick: async () => {
            if (!confirm(`Remove the grant of ${who} on ${c.name}? Its runs lose the collection.`)) return;
            try { await api.delete_collections_by_id_grants_by_subject_id(c.id, id); status(`${who} no longer has ${c.name}`); reload(); } catch (e) { status(e.message, "error"); }
          } }, "Remove grant"));
      }) : h("li", { class: "muted" }, "Not granted yet: no agent's run can use it."));
    } catch (e) { clear(list, errorBox(e)); }
  };
  box.append(list, form({
    label: `Grant ${c.name}`, submit: "Grant", cls: "inline",
    fields: [{ name: "subject", label: "Guild or agent", type: "select", required: true, options: [{ value: "", label: "Choose…" }, ...subjects.values()] },
      { name: "access", label: "Access", type: "select", value: "read", options: [{ value: "read", label: "Read" }, { value: "write", label: "Read and write" }, { value: "none", label: "Refuse (overrides its guild)" }] }],
    onSubmit: async (v) => {
      if (!v.subject) throw Object.assign(new Error("Choose a guild or an agent to grant it to."), { problems: [{ field: "subject", message: "choose a guild or an agent" }] });
      const [kind, id] = v.subject.split(":");
      await api.put_collections_by_id_grants(c.id, { [kind + "_id"]: id, access: v.access });
      status(`${subjects.get(id)?.label || "Granted"}: ${v.access} on ${c.name}`); reload();
    },
  }));
  reload();
}

async function records(body, c) {
  const table = h("table", {});
  const reload = async () => {
    const r = await api.get_collections_by_id_records(c.id);
    const names = (c.columns || []).map((x) => x.name);
    if (!(r.records || []).length) return clear(table, h("caption", { class: "muted" }, "No record yet."));
    clear(table, h("thead", {}, h("tr", {}, names.map((n) => h("th", {}, n)), h("th", {}, "Updated"), h("th", {}, "Actions"))),
      h("tbody", {}, r.records.map((rec) => h("tr", {}, names.map((n) => h("td", {}, fmt(rec.values?.[n]))),
        h("td", {}, when(rec.updated_at)),
        h("td", {}, h("button", { type: "button", class: "small danger", onclick: async () => {
          if (!confirm(`Remove this record from ${c.name}?`)) return;
          await api.delete_collections_by_id_records_by_record_id(c.id, rec.id); status("Record removed"); reload();
        } }, "Remove"))))));
  };
  body.append(table, h("h4", {}, "Add a record"), form({
    label: `Add a record to ${c.name}`, submit: "Add record",
    fields: (c.columns || []).map((x) => ({ name: x.name, label: x.name + (x.required ? "" : " (optional)"), help: x.description,
      type: x.type === "boolean" ? "checkbox" : x.type === "number" || x.type === "integer" ? "number" : x.values?.length ? "select" : "text",
      options: x.values?.length ? ["", ...x.values] : undefined })),
    onSubmit: async (v, f) => {
      const values = Object.fromEntries(Object.entries(v).filter(([, x]) => x !== "" && x !== undefined));
      await api.post_collections_by_id_records(c.id, values); status("Record added"); f.reset(); reload();
    },
  }));
  await reload().catch((e) => body.append(errorBox(e)));
}

function fmt(v) {
  if (v === undefined || v === null) return "";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}


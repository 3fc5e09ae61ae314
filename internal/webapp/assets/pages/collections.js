// An organisation's collections: their columns and records; a record is
// added from a form of the collection's columns.
import * as api from "../api.gen.js";
import { h, clear, form, status, errorBox, when } from "../ui.js";

export async function collectionsPanel(panel, org) {
  const list = h("div", { id: "collections" });
  panel.append(h("h2", {}, "Collections"), list);
  let cols;
  try { cols = await api.get_orgs_by_id_collections(org.id); } catch (e) { list.append(errorBox(e)); return; }
  if (!cols.length) list.append(h("p", { class: "muted" }, "No collection yet. Define one below; agents read and write its records once a guild or agent is granted it."));
  panel.append(h("h3", {}, "Define a collection"), form({
    label: "Define a collection", submit: "Define collection",
    fields: [{ name: "name", label: "Name", required: true }, { name: "description", label: "Description", type: "textarea" },
      { name: "columns", label: "Columns", type: "textarea", required: true,
        help: "One a line: name, type (text, number, datetime, boolean, id, enum, text_array, enum_array), then any of required, unique, values=a|b|c. For example: email text required unique" }],
    onSubmit: async (v) => {
      await api.post_orgs_by_id_collections(org.id, { name: v.name, description: v.description, columns: parseColumns(v.columns) });
      status(`Collection ${v.name} defined`); clear(panel); collectionsPanel(panel, org);
    },
  }));
  for (const c of cols) {
    const body = h("div", {});
    const d = h("details", { class: "collection" }, h("summary", {}, h("strong", {}, c.name), " ",
      h("span", { class: "muted" }, (c.columns || []).map((x) => `${x.name}:${x.type}`).join(", "))), body);
    d.addEventListener("toggle", () => { if (d.open && !body.childElementCount) records(body, c); });
    list.append(d);
  }
}

// parseColumns reads the Columns box: "name type [required] [unique] [values=a|b]" a line.
function parseColumns(text) {
  return text.split("\n").map((l) => l.trim()).filter(Boolean).map((l) => {
    const [name, type, ...flags] = l.split(/\s+/);
    const col = { name, type: type || "text" };
    for (const f of flags) {
      if (f === "required") col.required = true;
      else if (f === "unique") col.unique = true;
      else if (f.startsWith("values=")) col.values = f.slice(7).split("|").filter(Boolean);
      else throw new Error(`Column ${name}: "${f}" is not required, unique or values=a|b`);
    }
    return col;
  });
}

async function records(body, c) {
  const table = h("table", {});
  const reload = async () => {
    const r = await api.get_collections_by_id_records(c.id);
    const names = (c.columns || []).map((x) => x.name);
    clear(table, h("thead", {}, h("tr", {}, names.map((n) => h("th", {}, n)), h("th", {}, "Updated"), h("th", {}, ""))),
      h("tbody", {}, (r.records || []).map((rec) => h("tr", {}, names.map((n) => h("td", {}, fmt(rec.values?.[n]))),
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

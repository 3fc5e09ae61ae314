// Panels shared by the organisation, guild and agent pages.
import * as api from "../api.gen.js";
import { h, clear, form, status, errorBox, when } from "../ui.js";
import { markdown } from "../markdown.js";

const notesAPI = {
  organisation: { list: api.get_orgs_by_id_notes, put: api.put_orgs_by_id_notes_by_key, del: api.delete_orgs_by_id_notes_by_key },
  guild: { list: api.get_guilds_by_id_notes, put: api.put_guilds_by_id_notes_by_key, del: api.delete_guilds_by_id_notes_by_key },
  agent: { list: api.get_agents_by_id_notes, put: api.put_agents_by_id_notes_by_key, del: api.delete_agents_by_id_notes_by_key },
};

export function renameForm(current, save, label = "Name") {
  return form({
    label: "Rename", submit: "Rename", cls: "inline",
    fields: [{ name: "name", label, value: current, required: true }],
    onSubmit: async (v) => { await save(v.name); status("Renamed"); },
  });
}

// notesPanel lists notes rendered (a safe Markdown subset) and writes one;
// Edit puts a note back into the form.
export async function notesPanel(panel, scope, id) {
  const n = notesAPI[scope];
  const list = h("ul", { class: "rows" });
  const write = form({
    label: "Write a note", submit: "Save note",
    fields: [{ name: "key", label: "Key", required: true }, { name: "content", label: "Content", type: "textarea", rows: 8,
      help: "Markdown: # headings, - lists, **bold**, *italic*, `code`, [links](https://…)." }],
    onSubmit: async (v, f) => { await n.put(id, v.key, { content: v.content }); status(`Note ${v.key} saved`); f.reset(); reload(); },
  });
  const edit = (note) => {
    write.elements.key.value = note.key;
    write.elements.content.value = note.content;
    write.elements.content.focus();
  };
  const reload = async () => {
    const notes = await n.list(id);
    clear(list, notes.length ? notes.map((note) => h("li", { class: "note", "data-note": note.key },
      h("details", {}, h("summary", {}, h("strong", {}, note.key), " ", h("span", { class: "muted" }, `${note.size} bytes · ${when(note.updated_at)}`)),
        markdown(note.content),
        h("div", { class: "actions" },
          h("button", { type: "button", class: "small", onclick: () => edit(note) }, `Edit ${note.key}`),
          h("button", { type: "button", class: "danger small", onclick: async () => { if (!confirm(`Delete the note ${note.key}?`)) return; await n.del(id, note.key); status(`Note ${note.key} deleted`); reload(); } }, "Delete note"))))) :
      h("li", { class: "muted" }, "No notes yet. Agents keep notes here with their note tools; you can write one below."));
  };
  panel.append(h("h2", {}, "Notes"), list, h("h3", {}, "Write a note"), write);
  await reload().catch((e) => panel.append(errorBox(e)));
}

const secretsAPI = {
  organisation: { list: api.get_orgs_by_id_secrets, put: api.put_orgs_by_id_secrets_by_name, del: api.delete_orgs_by_id_secrets_by_name },
  guild: { list: api.get_guilds_by_id_secrets, put: api.put_guilds_by_id_secrets_by_name, del: api.delete_guilds_by_id_secrets_by_name },
  agent: { list: api.get_agents_by_id_secrets, put: api.put_agents_by_id_secrets_by_name, del: api.delete_agents_by_id_secrets_by_name },
};

// secretsPanel lists secrets (names and who they reach, never values) and sets one.
export async function secretsPanel(panel, scope, id) {
  const s = secretsAPI[scope];
  const list = h("ul", { class: "rows" });
  const reload = async () => {
    const secrets = await s.list(id);
    clear(list, secrets.length ? secrets.map((x) => h("li", {}, h("strong", {}, x.name), " ",
      h("span", { class: "muted" }, `owned by the ${x.owner_scope}; set ${when(x.set_at)}; reaches ${(x.reaches || []).map((r) => r.agent_name).join(", ") || "no agent"}`), " ",
      x.owner_id === id ? h("button", { type: "button", class: "danger small", onclick: async () => { if (!confirm(`Delete the secret ${x.name}? Agents it reaches lose it.`)) return; await s.del(id, x.name); status("Secret deleted"); reload(); } }, "Delete") : null)) :
      h("li", { class: "muted" }, "No secrets."));
  };
  panel.append(h("h2", {}, "Secrets"), h("p", { class: "muted" }, "Values are never shown again once stored."), list,
    form({
      label: "Set a secret", submit: "Store secret",
      fields: [{ name: "name", label: "Name", required: true, help: "Upper-case letters, digits and underscores." }, { name: "value", label: "Value", type: "password", required: true }],
      onSubmit: async (v, f) => { await s.put(id, v.name, { value: v.value }); status("Secret stored"); f.reset(); reload(); },
    }));
  await reload().catch((e) => panel.append(errorBox(e)));
}

export function coming(panel, what) {
  panel.append(h("p", { class: "muted" }, what, " is coming: the API does not have it yet."));
}

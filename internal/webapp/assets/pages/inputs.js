// Server forms: input an MCP server asks a person for in the middle of a
// call (docs/adr/0515). The call waits while the form is open; the answer
// goes back to the server, nowhere else.
import * as api from "../api.gen.js";
import { h, clear, status, when, errorBox, nextId } from "../ui.js";

// inputsSection lists the organisation's forms in one state.
export function inputsSection(orgId) {
  const list = h("ul", { class: "rows", id: "inputs", "aria-live": "polite" });
  const filter = h("select", { "aria-label": "Show server forms", onchange: () => load() },
    ["pending", "accepted", "declined", "cancelled", "expired"].map((s) => h("option", { value: s }, s)));
  const load = async () => {
    try {
      const reqs = await api.get_orgs_by_id_inputs(orgId, { query: { state: filter.value } });
      clear(list, reqs.length ? reqs.map((r) => h("li", {}, inputCard(r, load))) :
        h("li", { class: "muted" }, filter.value === "pending" ? "No server waits for input." : "None."));
    } catch (e) { clear(list, errorBox(e)); }
  };
  const section = h("section", {}, h("h2", {}, "Server forms"),
    h("p", { class: "muted" }, "MCP servers that ask a person for input during a call. The call waits until you answer or the time runs out (then the server is told no)."),
    h("p", {}, filter), list);
  return { section, load, busy: () => filter.value === "pending" && !list.contains(document.activeElement) };
}

// field builds the control of one property of the server's schema and a
// function that reads its value (undefined: left empty).
function field(name, p, required) {
  const id = nextId("in");
  const label = h("label", { for: id }, p.title || name, required ? " *" : "");
  const help = p.description ? h("small", { class: "muted" }, p.description) : null;
  const choices = (p.enum || (p.oneOf || []).map((o) => o.const)).map((v, i) => ({ v, t: (p.enumNames || [])[i] || (p.oneOf || [])[i]?.title || String(v) }));
  if (p.type === "boolean") {
    const box = h("input", { id, name, type: "checkbox", checked: p.default === true });
    return { el: h("p", {}, box, " ", label, help), read: () => box.checked };
  }
  if (p.type === "array") {
    const items = p.items || {};
    const opts = (items.enum || (items.anyOf || []).map((o) => o.const)).map((v, i) => ({ v, t: (items.anyOf || [])[i]?.title || String(v) }));
    const boxes = opts.map((o) => ({ o, box: h("input", { type: "checkbox", name, value: String(o.v), checked: (p.default || []).includes(o.v) }) }));
    return { el: h("fieldset", {}, h("legend", {}, p.title || name, required ? " *" : ""), help,
      boxes.map(({ o, box }) => h("label", {}, box, " ", o.t))), read: () => boxes.filter((b) => b.box.checked).map((b) => b.o.v) };
  }
  if (choices.length) {
    const sel = h("select", { id, name }, required ? null : h("option", { value: "" }, "—"),
      choices.map((c, i) => h("option", { value: String(i), selected: c.v === p.default }, c.t)));
    return { el: h("p", {}, label, " ", sel, help), read: () => sel.value === "" ? undefined : choices[Number(sel.value)].v };
  }
  const number = p.type === "number" || p.type === "integer";
  const type = number ? "number" : { email: "email", uri: "url", date: "date", "date-time": "datetime-local" }[p.format] || "text";
  const input = h("input", { id, name, type, required, min: p.minimum, max: p.maximum, step: p.type === "integer" ? 1 : number ? "any" : undefined,
    minlength: p.minLength, maxlength: p.maxLength, value: p.default ?? undefined });
  return { el: h("p", {}, label, " ", input, help), read: () => {
    if (input.value === "") return undefined;
    if (number) return Number(input.value);
    if (p.format === "date-time") return new Date(input.value).toISOString();
    return input.value;
  } };
}

// inputCard shows one request: who asks, for which call, and while it is
// pending the server's form (or its link) with the three answers.
export function inputCard(r, onDone) {
  const pending = r.state === "pending";
  const schema = r.requested_schema || {};
  const required = new Set(schema.required || []);
  // Required fields first; the schema's order otherwise.
  const props = Object.entries(schema.properties || {}).sort(([a], [b]) => required.has(b) - required.has(a));
  const fields = r.mode === "form" ? props.map(([n, p]) => ({ n, ...field(n, p, required.has(n)) })) : [];
  const send = (action) => async () => {
    const body = { action };
    if (action === "accept" && r.mode === "form") {
      body.content = {};
      for (const f of fields) { const v = f.read(); if (v !== undefined) body.content[f.n] = v; }
    }
    try {
      await api.post_inputs_by_id(r.id, body);
      status(action === "accept" ? "Sent to the server" : "The server is told: " + action);
    } catch (e) { status(e.message || String(e), "error"); return; }
    onDone?.();
  };
  const link = r.mode === "url" ? h("p", {}, "The server asks you to open ",
    h("a", { href: r.url, target: "_blank", rel: "noopener noreferrer" }, r.url)) : null;
  return h("article", { class: "approval", "data-input": r.id },
    h("h3", {}, h("code", {}, r.tool), " ", h("span", { class: "badge " + r.state }, r.state)),
    h("p", { class: "muted" }, "Asked by the server ", h("code", {}, r.server), " · ",
      h("a", { href: `/runs/${r.run_id}` }, "run ", r.run_id.slice(0, 8)),
      pending ? [" · answer before ", when(r.expires_at)] : r.answered_by ? [" · by ", r.answered_by] : null),
    h("p", {}, r.message), link,
    pending ? h("form", { onsubmit: (ev) => { ev.preventDefault(); send("accept")(); } },
      fields.map((f) => f.el),
      h("div", { class: "actions" },
        h("button", { type: "submit" }, r.mode === "url" ? "Done" : "Send"),
        h("button", { type: "button", onclick: send("decline") }, "Decline"),
        h("button", { type: "button", class: "danger", onclick: send("cancel") }, "Cancel"))) : null);
}

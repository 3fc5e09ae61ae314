// Test on a connected login: pick a listed tool, fill a form generated from
// its JSON Schema, call it; the result shown is redacted and capped by the API.
import * as api from "../api.gen.js";
import { h, clear, form, errorBox } from "../ui.js";
import { dialog } from "./connect.js";

export async function testDialog(s, conn) {
  const body = h("div", { class: "dlg-body" });
  dialog(`Test ${s.name}`, body);
  let tools;
  try { tools = await api.get_mcp_connections_by_id_tools(conn.id); } catch (e) { body.append(errorBox(e)); return; }
  if (!tools.length) { body.append(h("p", {}, "This login lists no tools.")); return; }
  const pickID = "test-tool";
  const select = h("select", { id: pickID }, tools.map((t) => h("option", { value: t.name }, t.remote_name || t.name)));
  const holder = h("div", {});
  const result = h("pre", { class: "result wrap", "aria-live": "polite", id: "test-result" });
  const draw = () => {
    const t = tools.find((x) => x.name === select.value);
    clear(holder, t.description ? h("p", { class: "muted" }, t.description) : null, schemaForm(t, async (args) => {
      result.textContent = "Calling…";
      try {
        const r = await api.post_mcp_connections_by_id_call(conn.id, { tool: t.name, arguments: args });
        result.textContent = r.result;
      } catch (e) { result.textContent = ""; throw e; }
    }));
  };
  select.onchange = draw;
  body.append(h("div", { class: "field" }, h("label", { for: pickID }, "Tool"), select), holder, h("h3", {}, "Result"), result);
  draw();
}

// schemaForm turns an object schema's properties into fields: strings,
// numbers, booleans, enums; anything else is a JSON field.
export function schemaForm(tool, run) {
  const schema = tool.input_schema || {};
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  const specs = Object.entries(props).map(([name, p]) => {
    const label = name + (required.has(name) ? "" : " (optional)");
    const help = p.description;
    if (p.enum) return { name, label, help, type: "select", options: [...(required.has(name) ? [] : [""]), ...p.enum.map(String)], kind: "enum", p };
    switch (p.type) {
      case "boolean": return { name, label, help, type: "checkbox", value: p.default, kind: "boolean" };
      case "integer": case "number": return { name, label, help, type: "number", value: p.default ?? "", kind: p.type, step: p.type === "integer" ? "1" : "any" };
      case "string": return { name, label, help, value: p.default ?? "", kind: "string" };
      default: return { name, label, help: (help ? help + " " : "") + "(JSON)", type: "textarea", rows: 3, kind: "json" };
    }
  });
  return form({
    label: `Arguments of ${tool.name}`, submit: "Call", fields: specs,
    onSubmit: async (v) => {
      const args = {};
      const problems = [];
      for (const s of specs) {
        const x = v[s.name];
        if (s.kind === "boolean") { if (x || required.has(s.name)) args[s.name] = x; continue; }
        if (x === undefined || x === "") { if (required.has(s.name)) problems.push({ field: s.name, message: "is required" }); continue; }
        if (s.kind === "json") {
          try { args[s.name] = JSON.parse(x); } catch { problems.push({ field: s.name, message: "is not valid JSON" }); }
        } else if (s.kind === "enum" && s.p.type && s.p.type !== "string") args[s.name] = JSON.parse(x);
        else args[s.name] = x;
      }
      if (problems.length) throw Object.assign(new Error("Some arguments need a fix"), { problems });
      await run(args);
    },
  });
}

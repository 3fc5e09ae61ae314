// The typed columns of a collection as an operator declares them: a row of
// fields per column; the API's problems land on the row and field they name
// (columns[2].type).
import { h, nextId } from "../ui.js";

const types = [["text", "Text"], ["number", "Number"], ["datetime", "Date and time"], ["boolean", "Yes or no"], ["id", "Id"],
  ["enum", "One of a list"], ["text_array", "List of texts"], ["enum_array", "Several of a list"]];
const withValues = (t) => t === "enum" || t === "enum_array";

// columnsEditor starts from cols; value() is the list to send.
export function columnsEditor(cols) {
  const rows = h("div", { class: "columns-rows" });
  const el = h("fieldset", { class: "columns-editor", "data-field": "columns" }, h("legend", {}, "Columns"),
    h("p", { class: "field-error", "aria-live": "polite" }), rows,
    h("button", { type: "button", class: "small", onclick: () => { rows.append(columnRow({}, rows)); renumber(rows); rows.lastChild.querySelector("input").focus(); } }, "Add a column"));
  for (const c of cols.length ? cols : [{}]) rows.append(columnRow(c, rows));
  renumber(rows);
  const value = () => [...rows.children].map((r) => {
    const get = (k) => r.querySelector(`[data-k="${k}"]`);
    const col = { name: get("name").value.trim(), type: get("type").value };
    if (get("required").checked) col.required = true;
    if (get("unique").checked) col.unique = true;
    if (withValues(col.type)) col.values = get("values").value.split(",").map((v) => v.trim()).filter(Boolean);
    const d = get("description").value.trim();
    if (d) col.description = d;
    return col;
  });
  return { el, value };
}

function columnRow(c, rows) {
  const row = h("fieldset", { class: "column-row" }, h("legend", {}));
  const part = (k, label, input) => {
    const id = nextId("col-" + k);
    input.id = id;
    input.dataset.k = k;
    const check = input.type === "checkbox";
    return h("div", { class: "field" + (check ? " check" : ""), "data-k": "wrap-" + k },
      check ? [input, h("label", { for: id }, label)] : [h("label", { for: id }, label), input],
      h("p", { class: "field-error", "aria-live": "polite" }));
  };
  const type = h("select", {}, types.map(([v, l]) => h("option", { value: v, selected: (c.type || "text") === v }, l)));
  const values = h("input", { type: "text", value: (c.values || []).join(", "), placeholder: "open, won, lost", autocomplete: "off" });
  const valuesWrap = part("values", "Values (separated by commas)", values);
  const showValues = () => { valuesWrap.hidden = !withValues(type.value); };
  type.addEventListener("change", showValues);
  row.append(
    part("name", "Name", h("input", { type: "text", value: c.name || "", placeholder: "email", autocomplete: "off" })),
    part("type", "Type", type), valuesWrap,
    part("required", "Required", h("input", { type: "checkbox", checked: !!c.required })),
    part("unique", "Unique", h("input", { type: "checkbox", checked: !!c.unique })),
    part("description", "Description (optional)", h("input", { type: "text", value: c.description || "", autocomplete: "off" })),
    h("button", { type: "button", class: "small danger", onclick: () => { row.remove(); renumber(rows); } }, "Remove this column"));
  showValues();
  return row;
}

// renumber names each row and points the API's field names at its inputs.
function renumber(rows) {
  [...rows.children].forEach((r, i) => {
    r.querySelector("legend").textContent = `Column ${i + 1}`;
    for (const w of r.querySelectorAll("[data-k^='wrap-']")) w.dataset.field = `columns[${i}].${w.dataset.k.slice(5)}`;
  });
}

// Small DOM helpers: elements, forms that show the API's problems next to
// their fields, tabs and status messages. No framework.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) { el.replaceChildren(); append(el, children); return el; }

let uid = 0;
export const nextId = (p = "f") => `${p}-${++uid}`;

// field builds one labelled input; spec: {name, label, type, value, options, help, required, placeholder}.
export function field(spec) {
  const id = nextId(spec.name.replace(/[^a-z0-9]/gi, "-"));
  const errId = id + "-err";
  const helpId = spec.help ? id + "-help" : undefined;
  let input;
  const common = { id, name: spec.name, "aria-describedby": [helpId, errId].filter(Boolean).join(" "), required: spec.required };
  if (spec.type === "select") {
    input = h("select", common, (spec.options || []).map((o) => {
      const opt = typeof o === "string" ? { value: o, label: o } : o;
      return h("option", { value: opt.value, selected: String(opt.value) === String(spec.value ?? ""), disabled: opt.disabled }, opt.label);
    }));
  } else if (spec.type === "textarea") {
    input = h("textarea", { ...common, rows: spec.rows || 4, placeholder: spec.placeholder });
    input.value = spec.value ?? "";
  } else if (spec.type === "checkbox") {
    input = h("input", { ...common, type: "checkbox", checked: !!spec.value });
  } else {
    input = h("input", { ...common, type: spec.type || "text", value: spec.value ?? "", placeholder: spec.placeholder,
      autocomplete: spec.autocomplete || "off", min: spec.min, max: spec.max, step: spec.step });
  }
  const wrap = h("div", { class: "field" + (spec.type === "checkbox" ? " check" : ""), "data-field": spec.name },
    spec.type === "checkbox" ? [input, h("label", { for: id }, spec.label)] : [h("label", { for: id }, spec.label), input],
    spec.help ? h("p", { class: "help", id: helpId }, spec.help) : null,
    h("p", { class: "field-error", id: errId, "aria-live": "polite" }));
  return wrap;
}

// form renders fields and a submit button; onSubmit(values) may throw an
// ApiError, whose problems are shown beside their fields.
export function form({ fields = [], submit = "Save", onSubmit, extra, label, cls }) {
  const formError = h("p", { class: "form-error", role: "alert" });
  const btn = h("button", { type: "submit" }, submit);
  const f = h("form", { class: "form " + (cls || ""), "aria-label": label, novalidate: true },
    fields.map((s) => (s instanceof Node ? s : field(s))), extra, formError, h("div", { class: "actions" }, btn));
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearProblems(f);
    btn.disabled = true;
    try {
      await onSubmit(values(f), f);
    } catch (err) {
      showProblems(f, err);
    } finally {
      btn.disabled = false;
    }
  });
  return f;
}

export function values(f) {
  const out = {};
  for (const el of f.elements) {
    if (!el.name) continue;
    if (el.type === "checkbox") out[el.name] = el.checked;
    else if (el.type === "number") out[el.name] = el.value === "" ? undefined : Number(el.value);
    else out[el.name] = el.value;
  }
  return out;
}

export function clearProblems(f) {
  f.querySelectorAll(".field-error, .form-error").forEach((p) => (p.textContent = ""));
  f.querySelectorAll("[aria-invalid]").forEach((i) => i.removeAttribute("aria-invalid"));
}

// showProblems puts each problem under the field it names (the last segment
// of a dotted name also matches: config.max_scripts → max_scripts).
export function showProblems(f, err) {
  const left = [];
  for (const p of err.problems || []) {
    const names = [p.field, String(p.field || "").split(".").pop(), String(p.field || "").replace(/^values\./, "")];
    const wrap = names.map((n) => n && f.querySelector(`[data-field="${CSS.escape(n)}"]`)).find(Boolean);
    if (wrap) {
      wrap.querySelector(".field-error").textContent = p.message;
      wrap.querySelector("input,select,textarea")?.setAttribute("aria-invalid", "true");
    } else left.push(`${p.field}: ${p.message}`);
  }
  const fe = f.querySelector(".form-error");
  if (!err.problems?.length || left.length) fe.textContent = [err.message, ...left].filter(Boolean).join(" — ");
  f.querySelector('[aria-invalid="true"]')?.focus();
}

// status shows a short message in the page's live region.
export function status(msg, kind = "ok") {
  const el = document.getElementById("status");
  if (!el) return;
  el.className = "status " + kind;
  el.textContent = msg;
  clearTimeout(status.t);
  status.t = setTimeout(() => { el.textContent = ""; }, 6000);
}

// tabs: [{id, label, render(panel)}]; the selected id lives in the URL's ?tab=.
export function tabs(list, selected, onSelect) {
  const bar = h("div", { class: "tabs", role: "tablist" });
  const panel = h("section", { class: "panel", role: "tabpanel", tabindex: "-1" });
  const pick = (id, focus) => {
    for (const b of bar.children) {
      const on = b.dataset.tab === id;
      b.setAttribute("aria-selected", on ? "true" : "false");
      b.tabIndex = on ? 0 : -1;
      if (on && focus) b.focus();
    }
    const t = list.find((x) => x.id === id) || list[0];
    panel.setAttribute("aria-labelledby", "tab-" + t.id);
    clear(panel);
    onSelect?.(t.id);
    if (t.coming) panel.append(h("p", { class: "muted" }, "Coming: ", t.coming));
    else t.render(panel);
  };
  list.forEach((t, i) => {
    const b = h("button", { type: "button", role: "tab", id: "tab-" + t.id, "data-tab": t.id, onclick: () => pick(t.id) },
      t.label, t.coming ? h("span", { class: "badge" }, "coming") : null);
    b.addEventListener("keydown", (ev) => {
      const dir = ev.key === "ArrowRight" ? 1 : ev.key === "ArrowLeft" ? -1 : 0;
      if (dir) pick(list[(i + dir + list.length) % list.length].id, true);
    });
    bar.append(b);
  });
  const wrap = h("div", {}, bar, panel);
  pick(list.some((t) => t.id === selected) ? selected : list[0].id);
  return wrap;
}

export function errorBox(err) {
  return h("p", { class: "form-error", role: "alert" }, err.message || String(err));
}

export function when(t) {
  if (!t) return "—";
  const d = new Date(t);
  return isNaN(d) ? t : d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" });
}

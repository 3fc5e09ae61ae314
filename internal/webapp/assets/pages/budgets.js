// The Budgets tab of the organisation, guild and agent pages: each limit
// beside the use against it, and a form to change them (docs/budgets.md).
import * as api from "../api.gen.js";
import { h, clear, form, status, errorBox } from "../ui.js";

const budgetsAPI = {
  organisation: { get: api.get_orgs_by_id_budgets, put: api.put_orgs_by_id_budgets },
  guild: { get: api.get_guilds_by_id_budgets, put: api.put_guilds_by_id_budgets },
  agent: { get: api.get_agents_by_id_budgets, put: api.put_agents_by_id_budgets },
};

const when = (t) => new Date(t).toISOString().slice(0, 16).replace("T", " ") + " UTC";

function row(label, used, limit, resets, fmt = (v) => String(v)) {
  const over = limit !== null && limit !== undefined && used >= limit;
  return h("tr", {},
    h("th", { scope: "row" }, label),
    h("td", {}, fmt(used)),
    h("td", {}, limit === null || limit === undefined ? h("span", { class: "muted" }, "no limit") : fmt(limit)),
    h("td", {}, over ? h("span", { class: "badge warn" }, "reached") : null),
    h("td", { class: "muted" }, when(resets)));
}

export async function budgetsPanel(panel, scope, id) {
  const b = budgetsAPI[scope];
  let cur;
  try { cur = await b.get(id); } catch (e) { panel.append(errorBox(e)); return; }
  const l = cur.limits, u = cur.use;
  const money = (v) => `${Number(v).toFixed(2)} ${l.currency}`;
  panel.append(h("h2", {}, "Budgets"),
    h("p", { class: "muted" }, `Limits on this ${scope}'s runs. A run that reaches one stops with a message saying which; new runs and schedule firings are refused until it resets. Days and months are UTC.`),
    h("table", { id: "budget-use" }, h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, "Used"), h("th", {}, "Limit"), h("th", {}, ""), h("th", {}, "Resets"))),
      h("tbody", {},
        row("Tool calls today", u.tool_calls_today, l.tool_calls_per_day, cur.day_resets_at),
        row("Model tokens today", u.tokens_today, l.tokens_per_day, cur.day_resets_at),
        row("Model spend this month", u.money_this_month, l.money_per_month, cur.month_resets_at, money))),
    h("h3", {}, "Set limits"), form({
      label: "Set budget limits", submit: "Save limits",
      fields: [
        { name: "tool_calls_per_day", label: "Tool calls per day", type: "number", min: 0, step: 1, value: l.tool_calls_per_day ?? "", help: "Empty: no limit. 0 allows none." },
        { name: "tokens_per_day", label: "Model tokens per day", type: "number", min: 0, step: 1, value: l.tokens_per_day ?? "" },
        { name: "money_per_month", label: "Model spend per month", type: "number", min: 0, step: "any", value: l.money_per_month ?? "", help: "Costed from the admin's price table; only turns priced in this currency count." },
        { name: "currency", label: "Currency", value: l.currency, required: true },
      ],
      onSubmit: async (v) => {
        const body = { currency: v.currency.trim().toUpperCase() };
        for (const k of ["tool_calls_per_day", "tokens_per_day", "money_per_month"]) body[k] = v[k] === undefined ? null : v[k];
        await b.put(id, body); status("Limits saved"); clear(panel); budgetsPanel(panel, scope, id);
      },
    }));
}

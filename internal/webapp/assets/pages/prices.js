// The admin's model price table: what a million input and output tokens of
// each provider's model cost; model turns are costed from it (docs/budgets.md).
import * as api from "../api.gen.js";
import { h, clear, form, status, errorBox } from "../ui.js";

export async function pricesPanel(panel) {
  let prices;
  try { prices = await api.get_admin_prices(); } catch (e) { panel.append(errorBox(e)); return; }
  const again = () => { clear(panel); pricesPanel(panel); };
  panel.append(h("h2", {}, "Model prices"),
    h("p", { class: "muted" }, "Each model turn is costed when it is stored: its reported tokens times these prices. Money budgets count it in its currency; a model without a price costs nothing."),
    h("table", { id: "prices" }, h("thead", {}, h("tr", {}, h("th", {}, "Provider"), h("th", {}, "Model"), h("th", {}, "Input / 1M"), h("th", {}, "Output / 1M"), h("th", {}, ""))),
      h("tbody", {}, prices.length ? prices.map((p) => h("tr", {},
        h("td", {}, p.provider), h("td", {}, h("code", {}, p.model)),
        h("td", {}, `${p.input_per_million} ${p.currency}`), h("td", {}, `${p.output_per_million} ${p.currency}`),
        h("td", {}, h("button", { type: "button", class: "danger small", onclick: async () => {
          if (!confirm(`Remove the price of ${p.provider}/${p.model}? Later turns of it get no cost.`)) return;
          await api.delete_admin_prices({ query: { provider: p.provider, model: p.model } }); status("Price removed"); again();
        } }, "Remove")))) : h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No price yet: runs record tokens but no cost.")))),
    h("h3", {}, "Set a price"), form({
      label: "Set a model price", submit: "Save price",
      fields: [
        { name: "provider", label: "Provider", required: true, placeholder: "openrouter" },
        { name: "model", label: "Model", required: true, placeholder: "anthropic/claude-sonnet-4" },
        { name: "input_per_million", label: "Input, per million tokens", type: "number", min: 0, step: "any", required: true },
        { name: "output_per_million", label: "Output, per million tokens", type: "number", min: 0, step: "any", required: true },
        { name: "currency", label: "Currency", value: "USD", required: true },
      ],
      onSubmit: async (v) => { await api.put_admin_prices({ ...v, currency: v.currency.trim().toUpperCase() }); status("Price saved"); again(); },
    }));
}

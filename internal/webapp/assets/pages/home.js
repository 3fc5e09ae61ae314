import * as api from "../api.gen.js";
import { h, form, status } from "../ui.js";
import { navigate } from "../state.js";

// The start page: every organisation with its guilds and their agents, so
// each page is one click away and each tab two.
export async function homePage(main) {
  main.append(h("h1", {}, "Organisations"));
  const orgs = await api.get_orgs();
  const tree = h("ul", { class: "tree", id: "org-tree" });
  main.append(tree);
  if (!orgs.length) tree.append(h("li", { class: "muted" }, "No organisation yet: create one below."));
  await Promise.all(orgs.map(async (o) => {
    const li = h("li", {}, h("a", { href: `/orgs/${o.id}`, class: "org" }, o.name), " ",
      h("a", { href: `/orgs/${o.id}?tab=tools`, class: "small" }, "Tools"));
    tree.append(li);
    const guilds = await api.get_orgs_by_id_guilds(o.id).catch(() => []);
    if (!guilds.length) return;
    const gl = h("ul", {});
    li.append(gl);
    await Promise.all(guilds.map(async (g) => {
      const gi = h("li", {}, h("a", { href: `/guilds/${g.id}` }, g.name), " ",
        h("a", { href: `/guilds/${g.id}?tab=issues`, class: "small" }, "Issues"));
      gl.append(gi);
      const agents = await api.get_guilds_by_id_agents(g.id).catch(() => []);
      if (agents.length) gi.append(h("ul", {}, agents.map((a) => h("li", {}, h("a", { href: `/agents/${a.id}` }, a.name), " ",
        h("a", { href: `/agents/${a.id}?tab=runs`, class: "small" }, "Runs")))));
    }));
  }));
  main.append(h("h2", {}, "New organisation"), form({
    label: "New organisation", submit: "Create organisation",
    fields: [{ name: "name", label: "Name", required: true }, { name: "slug", label: "Slug (optional)", help: "Lowercase letters, digits and dashes; made from the name when empty." }],
    onSubmit: async (v) => {
      const o = await api.post_orgs({ name: v.name, slug: v.slug || undefined });
      status(`Created ${o.name}`);
      navigate(`/orgs/${o.id}`);
    },
  }));
}

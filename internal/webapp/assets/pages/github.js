// Where a GitHub login lands when the user reaches several installations of
// the box's App: pick the account the login keeps. The browser's cookie
// names the login; the page never sees an installation id, code or state.
import * as api from "../api.gen.js";
import { h } from "../ui.js";
import { navigate } from "../state.js";

export async function githubChoosePage(main) {
  main.append(h("h1", {}, "Choose the GitHub account"));
  let picker;
  try {
    picker = await api.get_mcp_oauth_github_installation({ quiet: true });
  } catch (e) {
    return navigate("/connected?" + new URLSearchParams({ result: "refused", reason: e.code }), true);
  }
  const choose = async (account, btn) => {
    btn.disabled = true;
    try {
      const r = await api.post_mcp_oauth_github_installation({ account });
      navigate("/connected?" + new URLSearchParams({ result: r.status || "connected", account: r.account_hint || account }), true);
    } catch (e) {
      navigate("/connected?" + new URLSearchParams({ result: "refused", reason: e.code }), true);
    }
  };
  main.append(
    h("p", {}, "Your GitHub user reaches the box's App on several accounts. The login works on one of them: choose it."),
    h("ul", { class: "rows", id: "github-accounts" }, picker.accounts.map((a) => h("li", {},
      h("strong", {}, a.account), " ",
      h("button", { type: "button", "data-account": a.account, onclick: (ev) => choose(a.account, ev.target) }, `Use ${a.account}`)))),
    h("p", {}, "Not listed? ", h("a", { href: picker.install_url, rel: "noopener noreferrer" }, "Install the App on another account"),
      " and the login comes back here."));
}

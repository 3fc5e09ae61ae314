import * as api from "../api.gen.js";
import { h, form } from "../ui.js";
import { navigate, refreshMe } from "../state.js";

export async function signInPage(main) {
  const next = new URLSearchParams(location.search).get("next") || "/";
  main.append(
    h("h1", {}, "Sign in"),
    h("p", {}, "Paste an API token (gld_…). The app keeps a session cookie instead; the token is not stored in the browser. Mint one with ",
      h("code", {}, "guilds tokens create"), "."),
    form({
      label: "Sign in", submit: "Sign in",
      fields: [{ name: "token", label: "API token", type: "password", required: true, autocomplete: "off" }],
      onSubmit: async (v) => {
        await api.post_session({ token: v.token.trim() });
        await refreshMe();
        navigate(next.startsWith("/") && !next.startsWith("//") ? next : "/", true);
      },
    }));
  main.querySelector("input")?.focus();
}

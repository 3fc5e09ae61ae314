// Where an OAuth login lands (the callback redirects a browser here): it
// says what happened. The URL holds only the outcome, never a code or token.
import { h } from "../ui.js";

const reasons = {
  oauth_other_browser: "This login was started in another browser: finish it in the browser that clicked Connect, or connect again from this one.",
  invalid_state: "The login is unknown or has expired: connect again.",
  oauth_issuer_mismatch: "The answer came from another authorization server than the one the login started with.",
  oauth_issuer_missing: "The answer did not name its authorization server, which that server always does: it did not come from it. Connect again.",
  access_denied: "The provider says access was refused.",
  oauth_failed: "The provider did not complete the login.",
  github_installation_needs_approval: "Another organisation on this box holds that GitHub installation: a box admin approves attaching it (Admin), then connect again.",
  github_refused: "GitHub's user cannot reach the installation the login named: connect again, choosing an account the user belongs to.",
  github_denied: "GitHub's user refused the authorization.",
  github_expired: "The login took too long: connect again.",
};

export async function landingPage(main) {
  const q = new URLSearchParams(location.search);
  // Nothing of the query stays in the address bar or history.
  history.replaceState(null, "", "/connected");
  const ok = q.get("result") === "connected";
  const code = q.get("reason") || "";
  if (q.get("result") === "requested") {
    main.append(h("h1", {}, "Request sent"), h("p", { id: "landing-result", role: "status" },
      "GitHub sent your request to install the App to the account's owners. Nothing failed: once an owner approves it, click Reconnect on the Tools view to finish the login."),
    h("p", {}, h("a", { href: "/" }, "Back to the organisations")));
    return;
  }
  if (q.get("result") === "pending") {
    main.append(h("h1", {}, "One more step"), h("p", { id: "landing-result", role: "status" },
      "The sign-in worked. The login waits for a choice on its Tools view (for Drive, the folder it may reach)."),
    h("p", {}, h("a", { href: "/" }, "Back to the organisations")));
    return;
  }
  main.append(h("h1", {}, ok ? "Connected" : "The login did not complete"),
    h("p", { id: "landing-result", role: "status" }, ok
      ? `The login is connected${q.get("account") ? " as " + q.get("account") : ""}. You can close this tab and go back to the Tools view.`
      : (reasons[code] || reasons[code.replace(/^oauth_/, "")] || "The login was refused or failed") + (code ? ` (${code})` : "")),
    h("p", {}, h("a", { href: "/" }, "Back to the organisations")));
}

// The operator app: a router over plain ES modules. Every page is a
// function of the URL; the API client (api.gen.js) is generated from the
// route table, so a page can only call what the API has.
import * as api from "./api.gen.js";
import { onUnauthenticated } from "./http.js";
import { h, clear } from "./ui.js";
import { signInPage } from "./pages/signin.js";
import { homePage } from "./pages/home.js";
import { orgPage } from "./pages/org.js";
import { guildPage } from "./pages/guild.js";
import { agentPage } from "./pages/agent.js";
import { runPage } from "./pages/run.js";
import { adminPage } from "./pages/admin.js";
import { landingPage } from "./pages/landing.js";
import { githubChoosePage } from "./pages/github.js";
import { inboxPage, inboxCount } from "./pages/inbox.js";
import { studioPage } from "./pages/studio.js";
import { builderPage } from "./pages/builder.js";
import { app, leave, navigate, setRouter } from "./state.js";

const routes = [
  [/^\/$/, homePage],
  [/^\/inbox$/, inboxPage],
  [/^\/signin$/, signInPage],
  [/^\/connected$/, landingPage],
  [/^\/connected\/github$/, githubChoosePage],
  [/^\/orgs\/([^/]+)$/, orgPage],
  [/^\/orgs\/([^/]+)\/builder$/, builderPage],
  [/^\/issues\/([^/]+)\/studio$/, studioPage],
  [/^\/guilds\/([^/]+)$/, guildPage],
  [/^\/agents\/([^/]+)$/, agentPage],
  [/^\/runs\/([^/]+)$/, runPage],
  [/^\/admin$/, adminPage],
];

async function whoAmI() {
  try {
    app.me = await api.get_session({ quiet: true });
  } catch {
    app.me = null;
  }
  if (app.me) await readInstance();
}

// readInstance reads what the box can do again: a model key set or removed
// since the last page changes the banner.
async function readInstance() {
  try { app.instance = await api.get_instance(); } catch { app.instance = null; }
}

function renderNav() {
  const nav = document.getElementById("nav");
  if (!app.me) return clear(nav);
  clear(nav,
    h("a", { href: "/" }, "Organisations"),
    h("a", { href: "/inbox", id: "nav-inbox" }, "Inbox", h("span", { class: "badge", id: "inbox-count", hidden: true })),
    app.me.admin ? h("a", { href: "/admin" }, "Admin") : null,
    h("span", { class: "who" }, app.me.name),
    app.me.auth_mode === "token" ? h("button", { type: "button", class: "link", id: "signout", onclick: signOut }, "Sign out") : null);
  for (const a of nav.querySelectorAll("a")) {
    const here = a.getAttribute("href") === location.pathname;
    if (here) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
}

// showInboxCount fills the navigation's count of what waits for the
// operator, read again on every page.
async function showInboxCount() {
  const n = await inboxCount();
  const el = document.getElementById("inbox-count");
  if (!el) return;
  el.textContent = String(n);
  el.hidden = n === 0;
  el.setAttribute("aria-label", `${n} waiting`);
}

function renderBanner() {
  const b = document.getElementById("banner");
  clear(b);
  if (app.me && app.instance?.no_model_key) {
    b.append(h("p", { class: "banner", id: "no-model-key" },
      "No model key is set on this box or any organisation: runs cannot start. Set one on an organisation's Model keys tab, or set a provider's variable (Admin → Platform keys)."));
  }
}

async function signOut() {
  try { await api.delete_session(); } catch { /* the session is gone either way */ }
  app.me = null;
  navigate("/signin");
}

async function render() {
  const main = document.getElementById("main");
  const path = location.pathname;
  leave();
  if (!app.me && path !== "/signin") await whoAmI();
  else if (app.me) readInstance().then(renderBanner);
  // A login's landing pages answer without a session: the browser's login cookie is the key.
  if (!app.me && path !== "/signin" && !path.startsWith("/connected")) {
    return navigate("/signin?next=" + encodeURIComponent(path + location.search), true);
  }
  renderNav();
  renderBanner();
  if (app.me) showInboxCount();
  for (const [re, page] of routes) {
    const m = path.match(re);
    if (!m) continue;
    clear(main);
    try {
      await page(main, ...m.slice(1));
    } catch (err) {
      if (err.status === 404) notFound(main, path.split("/")[1]);
      else clear(main, h("h1", {}, "Something went wrong"), h("p", { class: "form-error", role: "alert" }, err.message));
    }
    document.title = (main.querySelector("h1")?.textContent || "guilds") + " · guilds";
    return;
  }
  notFound(main);
}

// notFound: an unknown address, or an id nothing here (or nothing you may see) holds.
const nouns = { orgs: "organisation", guilds: "guild", agents: "agent", runs: "run" };
function notFound(main, kind) {
  const what = nouns[kind] ? `No ${nouns[kind]} has this address, or it is not yours to see. ` : "No page here. ";
  clear(main, h("h1", {}, "Not found"), h("p", {}, what, h("a", { href: "/" }, "Back to the organisations")));
  document.title = "Not found · guilds";
}

async function refreshMe() { await whoAmI(); renderNav(); renderBanner(); }

setRouter({ render, refreshMe });

onUnauthenticated.add(() => {
  if (location.pathname !== "/signin") { app.me = null; navigate("/signin?next=" + encodeURIComponent(location.pathname), true); }
});

// Same-origin links route in the page.
document.addEventListener("click", (ev) => {
  const a = ev.target.closest("a");
  if (!a || a.target || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.button !== 0) return;
  const u = new URL(a.href, location.href);
  if (u.origin !== location.origin || u.pathname.startsWith("/api/")) return;
  ev.preventDefault();
  navigate(u.pathname + u.search);
});
window.addEventListener("popstate", render);
render();

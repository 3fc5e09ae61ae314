// The app's shared state and navigation, kept apart from the router
// (app.js): pages import this module and app.js imports the pages, so no
// module imports one that imports it back.
export const app = { me: null, instance: null };

// onLeave registers what to stop when the page changes (a run's event stream).
const leaving = new Set();
export function onLeave(f) { leaving.add(f); }

// leave stops what the current page registered; the router calls it.
export function leave() {
  leaving.forEach((f) => f());
  leaving.clear();
}

// The router's render and session refresh; app.js sets them at start.
let router = { render: async () => {}, refreshMe: async () => {} };
export function setRouter(r) { router = r; }

export function navigate(path, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  return router.render();
}

// setTab records the selected tab in the URL without reloading the page.
export function setTab(tab) {
  const u = new URL(location.href);
  if (u.searchParams.get("tab") === tab) return;
  u.searchParams.set("tab", tab);
  history.replaceState(null, "", u.pathname + u.search);
}

// refreshMe reads the session again and redraws the navigation.
export function refreshMe() { return router.refreshMe(); }

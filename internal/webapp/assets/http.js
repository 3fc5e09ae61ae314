// The one place the app talks HTTP: JSON in and out, the session cookie,
// the CSRF token on every mutating call, and the API's errors as ApiError.

export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || "http_" + status;
    this.problems = e.problems || [];
  }
}

export function csrfToken() {
  const m = document.cookie.match(/(?:^|;\s*)guilds_csrf=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

// Listeners told when a call comes back 401 (the session ended).
export const onUnauthenticated = new Set();

export async function call(method, path, body, opts = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && method !== "HEAD") {
    const t = csrfToken();
    if (t) headers["X-CSRF-Token"] = t;
  }
  let url = path;
  if (opts.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
    const s = q.toString();
    if (s) url += "?" + s;
  }
  const resp = await fetch(url, {
    method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (resp.status === 204) return null;
  let data = null;
  const text = await resp.text();
  if (text) { try { data = JSON.parse(text); } catch { data = null; } }
  if (!resp.ok) {
    const err = new ApiError(resp.status, data);
    if (resp.status === 401 && !opts.quiet) onUnauthenticated.forEach((f) => f(err));
    throw err;
  }
  return data;
}

// What a run's tools returned besides text, shown under the call that
// returned it: kept images, and MCP Apps pages in a sandboxed frame
// (docs/adr/0620). A page's route serves it with a sandbox CSP, so it runs
// with an opaque origin: no cookie, no API, no way into this page. The frame
// repeats the sandbox. This page is the app's host only as far as telling
// it the call's result; anything else it asks is refused.
import * as api from "../api.gen.js";
import { h } from "../ui.js";

const hostInfo = { name: "guilds", version: "1" };

export function runMedia(runId) {
  let list = [];
  const shown = new Set();
  const frames = new Map(); // contentWindow -> the result text its call returned
  const base = `/api/runs/${encodeURIComponent(runId)}`;

  const onMessage = (ev) => {
    const result = frames.get(ev.source);
    if (result === undefined) return;
    const msg = ev.data;
    if (!msg || msg.jsonrpc !== "2.0" || typeof msg.method !== "string") return;
    const reply = (body) => ev.source.postMessage({ jsonrpc: "2.0", id: msg.id, ...body }, "*");
    if (msg.method === "ui/initialize" && msg.id !== undefined) {
      reply({ result: { protocolVersion: msg.params?.protocolVersion || "2026-01-26", hostInfo, hostCapabilities: {}, hostContext: { displayMode: "inline" } } });
    } else if (msg.method === "ui/notifications/initialized") {
      ev.source.postMessage({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: { content: [{ type: "text", text: result }] } }, "*");
    } else if (msg.id !== undefined) {
      reply({ error: { code: -32601, message: `this host shows apps only: ${msg.method} is not supported` } });
    }
  };
  window.addEventListener("message", onMessage);

  const item = (m, resultText) => {
    const where = `${m.seq}/${m.idx}`;
    if (m.kind === "image") {
      return h("figure", { class: "run-image" }, h("img", { src: `${base}/images/${where}`, alt: `Image ${m.seq}.${m.idx} a tool returned`, loading: "lazy" }),
        h("figcaption", { class: "muted" }, `run image ${m.seq}.${m.idx} · ${m.media_type}`));
    }
    const frame = h("iframe", { class: "app-frame", sandbox: "allow-scripts", referrerpolicy: "no-referrer",
      title: `App ${m.uri}`, src: `${base}/apps/${where}`, "data-app": `${m.seq}.${m.idx}` });
    return h("figure", { class: "run-app" }, frame, h("figcaption", { class: "muted" }, `run app ${m.seq}.${m.idx} · ${m.uri}`));
  };

  return {
    async load() { list = await api.get_runs_by_id_media(runId).catch(() => list); },
    // attach shows the kept items of the result at seq after el, once each.
    attach(seq, el, resultText) {
      const fresh = list.filter((m) => m.seq === seq && !shown.has(`${m.kind}${m.seq}.${m.idx}`));
      if (!fresh.length) return;
      const box = h("div", { class: "media" });
      for (const m of fresh) { shown.add(`${m.kind}${m.seq}.${m.idx}`); box.append(item(m, resultText)); }
      el.after(box);
      // A frame's window is known once it is in the page, before its app
      // runs; the app's first message may come before its load event.
      for (const f of box.querySelectorAll("iframe")) frames.set(f.contentWindow, resultText());
    },
    close() { window.removeEventListener("message", onMessage); },
  };
}

// namesKept says whether a tool result's text names a kept item.
export const namesKept = (text) => /kept as run (image|app) \d+\.\d+/.test(text || "");

// A safe subset of Markdown, built as DOM nodes (never as HTML text, so a
// note cannot inject markup): headings, paragraphs, lists, fenced code,
// quotes, and inline code, bold, italic and http(s) links.
import { h } from "./ui.js";

export function markdown(text) {
  const out = h("div", { class: "md" });
  const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
  let para = [];
  let list = null;
  const flush = () => {
    if (para.length) out.append(h("p", {}, inline(para.join(" "))));
    para = [];
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      out.append(h("pre", {}, h("code", {}, code.join("\n"))));
      continue;
    }
    const head = line.match(/^(#{1,3})\s+(.*)$/);
    const item = line.match(/^\s*(?:[-*]|(\d+)\.)\s+(.*)$/);
    if (head) {
      flush();
      // Under the panel's h2: a note's headings start at h3.
      out.append(h("h" + (head[1].length + 2), {}, inline(head[2])));
    } else if (item) {
      if (para.length) flush();
      const tag = item[1] ? "ol" : "ul";
      if (!list || list.tagName.toLowerCase() !== tag) { list = h(tag, {}); out.append(list); }
      list.append(h("li", {}, inline(item[2])));
    } else if (line.startsWith(">")) {
      flush();
      out.append(h("blockquote", {}, inline(line.replace(/^>\s?/, ""))));
    } else if (!line.trim()) {
      flush();
    } else {
      list = null;
      para.push(line.trim());
    }
  }
  flush();
  return out;
}

// inline: `code`, **bold**, *italic* and [text](https://…); anything else is text.
function inline(s) {
  const parts = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*]+)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (let m; (m = re.exec(s));) {
    parts.push(s.slice(last, m.index));
    if (m[1] !== undefined) parts.push(h("code", {}, m[1]));
    else if (m[2] !== undefined) parts.push(h("strong", {}, m[2]));
    else if (m[3] !== undefined) parts.push(h("em", {}, m[3]));
    else if (/^https?:\/\//i.test(m[5])) parts.push(h("a", { href: m[5], rel: "noopener noreferrer", target: "_blank" }, m[4]));
    else parts.push(m[0]);
    last = re.lastIndex;
  }
  parts.push(s.slice(last));
  return parts;
}

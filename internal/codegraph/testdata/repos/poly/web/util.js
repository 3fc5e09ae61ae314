export function slugify(text) {
  return text.toLowerCase().replace(/\s+/g, "-");
}

export const joinSlugs = (parts) => parts.map(slugify).join("/");

export class Router {
  constructor() {
    this.routes = [];
  }

  add(path) {
    this.routes.push(slugify(path));
    return this;
  }
}

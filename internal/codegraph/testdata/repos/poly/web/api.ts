import { Router, slugify } from "./util";

export interface Handler {
  handle(req: Request): Promise<Response>;
}

export type Method = "GET" | "POST";

export enum Level {
  Low,
  High,
}

export class Api implements Handler {
  private router = new Router();

  async handle(req: Request): Promise<Response> {
    this.router.add(slugify(req.url));
    return new Response("ok");
  }
}

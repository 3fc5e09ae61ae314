import { Session, use } from "./store"

const session = new Session()

export function start(): string {
  return session.open() + use(session)
}

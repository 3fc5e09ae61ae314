export class Store {
  load(): string {
    return "x"
  }
}

export class Session extends Store {
  open(): string {
    return this.load()
  }
}

export interface Opener {
  open(): string
}

export function use(o: Opener): string {
  return o.open()
}

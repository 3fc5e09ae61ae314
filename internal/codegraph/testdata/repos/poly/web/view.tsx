import { Api } from "./api";

export function Banner(props: { title: string }) {
  const api = new Api();
  return <h1 onClick={() => api.handle(new Request("/"))}>{props.title}</h1>;
}

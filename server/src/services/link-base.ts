/**
 * Where links in mails point (issue 14 item 7, issue 22 item 4): IKI_PUBLIC_URL when it is
 * configured, else the address the request was sent to when that is a loopback name
 * (`http://localhost:8080`, `http://127.0.0.1:8080`), else the default base. A Host header is
 * the client's to choose, so any other name would let a stranger who asks for someone's reset
 * link have it point at their own server; a service that mails links must set IKI_PUBLIC_URL
 * (config.ts refuses SMTP without it).
 *
 * The app (app.ts) runs each request inside {@link withRequestOrigin} only when IKI_PUBLIC_URL
 * is not configured and the request's host is a loopback name (`requestOrigin` in routes/http.ts); a mail started while answering it (also one sent after the answer, which
 * inherits the request's async context) reads the origin with {@link linkBase}. A configured
 * URL always wins, so a forged Host header cannot redirect a link on a real deployment.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const requestOrigin = new AsyncLocalStorage<string>();

/** Runs `work` with `origin` as the base of links made while it runs. */
export function withRequestOrigin<T>(origin: string, work: () => T): T {
  return requestOrigin.run(origin, work);
}

/** The base URL of a link: the request's origin when one was set, else `publicUrl`. */
export function linkBase(publicUrl: string): string {
  return requestOrigin.getStore() ?? publicUrl;
}

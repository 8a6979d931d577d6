/**
 * Where links in mails point (issue 14 item 7): IKI_PUBLIC_URL when it is configured, else the
 * address the request was sent to, so a person who opened the service at
 * `http://192.168.1.5:8080` gets links to that address, never a guessed `localhost`.
 *
 * The app (app.ts) runs each request inside {@link withRequestOrigin} only when IKI_PUBLIC_URL
 * is not configured; a mail started while answering it (also one sent after the answer, which
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

/**
 * A webhook receiver on 127.0.0.1 for the tests: records every POST (event id, type, raw body,
 * Iki-Signature) and answers `status.code`.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got. */
export interface Received { eventId: string; type: string; body: string; signature: string }

/** A running receiver. */
export interface Receiver { url: string; got: Received[]; status: { code: number }; close(): Promise<void> }

/** Starts a receiver on a free loopback port; its URL ends in /hook. */
export async function receiver(): Promise<Receiver> {
  const got: Received[] = [];
  const status = { code: 200 };
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (p: Buffer) => parts.push(p));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      const parsed = JSON.parse(body) as { id: string; type: string };
      got.push({ eventId: parsed.id, type: parsed.type, body, signature: String(req.headers['iki-signature']) });
      res.statusCode = status.code;
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, got, status, close: () => new Promise((r) => { server.close(() => r()); }) };
}


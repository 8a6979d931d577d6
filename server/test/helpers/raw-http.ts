/**
 * HTTP over a bare socket, for requests no well-behaved client sends: a request whose head
 * promises a body that never comes (or comes forever), to show that the server answers from the
 * head alone and closes the connection without reading the body.
 */
import { connect, type Socket } from 'node:net';

/** What came back on the socket. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** Whether the server closed the connection (within the wait). */
  closed: boolean;
  /** Body bytes the client had written when the answer arrived. */
  sent: number;
}

/** Options of {@link rawRequest}. */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Body bytes sent right after the head; the client then stalls. */
  first?: Uint8Array;
  /** Keep sending zero bytes (64 KiB at a time) until the answer arrives, at most this many. */
  pump?: number;
  /** How long to wait for the answer and the close, in ms. */
  waitMs?: number;
}

function parse(raw: Buffer): Omit<RawAnswer, 'closed' | 'sent'> {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end < 0 ? raw.length : end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
  const headers = Object.fromEntries(head.slice(1).map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
  }));
  const text = end < 0 ? '' : raw.subarray(end + 4).toString('utf8');
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  return { status, headers, body };
}

/**
 * Sends the head (and `first`), then stalls or pumps, and resolves with the answer once the
 * server closed the connection or `waitMs` passed.
 */
export async function rawRequest(base: string, request: RawRequest): Promise<RawAnswer> {
  const url = new URL(base);
  const socket: Socket = connect(Number(url.port), url.hostname);
  const head = [`${request.method} ${request.path} HTTP/1.1`, `Host: ${url.host}`,
    ...Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
  const chunks: Buffer[] = [];
  let sent = 0;
  let answered = false;
  let sentAtAnswer = 0;
  const finished = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), request.waitMs ?? 5000);
    socket.on('data', (data: Buffer) => {
      if (!answered) sentAtAnswer = sent;
      answered = true;
      chunks.push(data);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.on('error', () => {});
  });
  socket.write(head);
  if (request.first !== undefined) {
    socket.write(request.first);
    sent += request.first.length;
  }
  if (request.pump !== undefined) {
    const piece = Buffer.alloc(64 * 1024);
    while (!answered && !socket.destroyed && sent < request.pump) {
      sent += piece.length;
      if (!socket.write(piece)) {
        await new Promise<void>((resolve) => {
          const done = () => resolve();
          socket.once('drain', done);
          socket.once('data', done);
          socket.once('close', done);
        });
      }
    }
  }
  const closed = await finished;
  socket.destroy();
  return { ...parse(Buffer.concat(chunks)), closed, sent: answered ? sentAtAnswer : sent };
}

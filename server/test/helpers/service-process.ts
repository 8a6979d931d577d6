/**
 * The service as deployed, in its own process: `node server/dist/main.js --port 0 --data DIR`,
 * for tests that kill it (SIGKILL), start two on one data directory, or cut its connections.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { encodePng } from '@iki/core';
import type { LogLine } from './app.js';
import type { ModelPackage } from './flow.js';

export const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** A running service process. */
export interface ServiceProcess {
  url: string;
  pid: number;
  logs: LogLine[];
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for the exit: nothing runs after the signal. */
  kill(): Promise<void>;
}

/** Starts the service and waits for its "listening" line; rejects with its stderr when it exits first. */
export async function startService(dataDir: string, env: Record<string, string>): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, [MAIN, '--port', '0', '--data', dataDir],
    // No load balancer watches a test's /readyz: no drain delay unless a test asks for one.
    { env: { PATH: process.env['PATH'] ?? '', IKI_DRAIN_DELAY_SECONDS: '0', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const logs: LogLine[] = [];
  let pending = '';
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(Object.assign(new Error(`service exited with ${code}: ${stderr}`), { stderr, code })));
    child.stderr?.on('data', (data: Buffer) => {
      stderr += data.toString('utf8');
      pending += data.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.startsWith('{'))) {
        const { level, message, ...fields } = JSON.parse(line) as Record<string, unknown>;
        logs.push({ level: String(level), message: String(message), fields });
        if (message === 'iki service listening') resolve(Number(fields['port']));
      }
    });
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  };
  return { url: `http://127.0.0.1:${port}`, pid: child.pid as number, logs,
    stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}

/** A model of one 256 x 128 random texture and its model3.json. */
export function tinyModel(side = 256): ModelPackage {
  const height = side / 2;
  const rgba = new Uint8Array(randomBytes(side * height * 4));
  for (let i = 3; i < rgba.length; i += 4) rgba[i] = 255;
  const model3 = new TextEncoder().encode(JSON.stringify({ Version: 3, FileReferences: { Textures: ['tex.png'] } }));
  return { name: 'Tiny', files: new Map([['tiny.model3.json', model3], ['tex.png', encodePng(side, height, rgba)]]),
    textures: new Map([['tex.png', { width: side, height, rgba }]]) };
}

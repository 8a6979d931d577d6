/**
 * The service as a separate process (`node server/dist/main.js --port 0`, everything else from
 * `env`), for the multi-instance tests that kill it, stop it with SIGTERM and check its exit
 * status: its stderr JSON log is captured as `LogLine`s and its address read from the line it
 * prints once it answers. (`service-process.ts` is the same idea with a data directory.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LogLine } from './app.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** A running service process. */
export interface ChildService {
  url: string;
  logs: LogLine[];
  child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) once the process ended. */
  exited: Promise<number | string>;
  /** SIGKILL, then waits for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM (a drain), then waits for the exit; resolves with the exit code. */
  term(): Promise<number | string>;
}

/** Starts `server/dist/main.js` with `env` (added to PATH and HOME only) on a free port. */
export async function startChildService(env: Record<string, string>): Promise<ChildService> {
  const child = spawn(process.execPath, [MAIN, '--port', '0'], {
    // No load balancer watches a test's /readyz: no drain delay unless a test asks for one.
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', IKI_DRAIN_DELAY_SECONDS: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const logs: LogLine[] = [];
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = await new Promise<string>((resolve, reject) => {
    let rest = '';
    const stderr: string[] = [];
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      rest += text;
      const lines = rest.split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        stderr.push(line);
        if (line.startsWith('{')) {
          const { level, message, ...fields } = JSON.parse(line) as Record<string, unknown>;
          logs.push({ level: String(level), message: String(message), fields });
        }
        const ready = /listening on (http:\/\/[0-9.:]+);/.exec(line);
        if (ready?.[1] !== undefined) resolve(ready[1]);
      }
    });
    void exited.then((code) => reject(new Error(`the service exited (${code}) before answering:\n${stderr.join('\n')}`)));
  });
  return {
    url, logs, child, exited,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async term() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * The validating reader of the environment that `config.ts` and the `*-config.ts` modules share:
 * each read either returns a valid value or records a problem (never quoting the value, since
 * some are secrets) and returns the fallback, so one start lists every problem at once.
 */
import { readFileSync } from 'node:fs';

export type Env = Readonly<Record<string, string | undefined>>;

export class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  str(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  /**
   * A secret: `name` itself, or the contents of the file `name_FILE` names (a Docker or
   * Kubernetes secret mounted as a file, so the value stays out of the process environment),
   * trimmed. Both set, or a file that cannot be read, is a problem; neither quotes the value.
   */
  secret(name: string): string | undefined {
    const direct = this.str(name);
    const file = this.str(`${name}_FILE`);
    if (file === undefined) return direct;
    if (direct !== undefined) {
      this.problems.push(`${name} and ${name}_FILE are both set; set one`);
      return undefined;
    }
    try {
      const value = readFileSync(file, 'utf8').trim();
      if (value !== '') return value;
      this.problems.push(`${name}_FILE names an empty file`);
    } catch (err) {
      this.problems.push(`${name}_FILE cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    return undefined;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.str(name);
    if (raw === undefined) return fallback;
    const value = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return value;
  }

  url(name: string): string | undefined {
    const raw = this.str(name);
    if (raw === undefined) return undefined;
    try {
      const url = new URL(raw);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
      return raw.replace(/\/+$/, '');
    } catch {
      this.problems.push(`${name} must be an http(s) URL`);
      return undefined;
    }
  }
}

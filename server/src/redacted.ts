/**
 * A configured secret (the root secret's text, a database URL with its password): only
 * `reveal()` hands the value out, so printing the configuration, logging it or serialising it
 * (`String`, `JSON.stringify`, `util.inspect`, even with `showHidden`) never shows it.
 */
import { inspect } from 'node:util';

const SHOWN = '<redacted>';

/** A string that does not print. */
export class Redacted {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The value, for the one place that uses it. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return SHOWN;
  }

  toJSON(): string {
    return SHOWN;
  }

  [inspect.custom](): string {
    return `Redacted(${SHOWN})`;
  }
}

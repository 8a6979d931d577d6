/**
 * Creating a small file exclusively and whole: the text is written and synced to a private file
 * beside `path` (mode 0600), then linked into place. The link fails when `path` exists, so of
 * processes racing to create it exactly one wins, and no reader ever sees a half-written file.
 * Used for the data directory's lock and the generated root secret.
 */
import { randomBytes } from 'node:crypto';
import { link, open, rm } from 'node:fs/promises';

/** Creates `path` holding `text`; false when it already exists. */
export async function createWhole(path: string, text: string): Promise<boolean> {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await rm(temp, { force: true });
  }
}

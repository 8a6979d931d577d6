// The token service remembers verified local tokens (a key release skips the Ed25519
// verification of a token it saw before) without accepting anything it would refuse.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TokenService } from '../src/services/tokens.js';

describe('access tokens', () => {
  it('accepts a remembered token only until it expires, and never a modified one', async () => {
    let now = new Date('2030-01-01T00:00:00.000Z');
    const tokens = new TokenService({ issuer: 'https://iki.test', ttlSeconds: 60, seed: randomBytes(32), oidc: undefined,
      now: () => now });
    const { accessToken } = await tokens.issue('acct_1', 'session1');
    const subject = { kind: 'local', accountId: 'acct_1', sessionId: 'session1' };
    expect(await tokens.verify(accessToken)).toEqual(subject);
    now = new Date(now.getTime() + 59_000);
    expect(await tokens.verify(accessToken)).toEqual(subject);
    // The same claims under another signature: refused although the original is remembered.
    const [head, body, signature = ''] = accessToken.split('.');
    const flipped = `${head}.${body}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    await expect(tokens.verify(flipped)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    // Expired: refused, from memory as from scratch.
    now = new Date(now.getTime() + 1_000);
    await expect(tokens.verify(accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(tokens.verify(accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    // Another service's key: refused.
    const other = new TokenService({ issuer: 'https://iki.test', ttlSeconds: 60, seed: randomBytes(32), oidc: undefined,
      now: () => now });
    await expect(other.verify((await tokens.issue('acct_1', 'session1')).accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});

/**
 * The connection and transfer bounds' configuration (issue 22 items 1 and 2,
 * `connection-config.ts`): defaults, seconds read as milliseconds, each variable at its limits
 * and just past them, and the total derived from the open-file limit.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { CONNECTION_DEFAULTS, defaultMaxConnections, maxConnectionsUnder, openFileLimit } from '../src/connection-config.js';

const problems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    return err instanceof ConfigError ? err.problems : [String(err)];
  }
};

describe('connection bounds configuration', () => {
  it('defaults to 20 s heads, 30 s bodies and stalls, an hour per request, 64 connections per client', () => {
    expect(loadConfig({}).connections).toEqual({ headersTimeoutMs: 20_000, requestTimeoutMs: 3_600_000, bodyTimeoutMs: 30_000,
      transferStallMs: 30_000, perClient: CONNECTION_DEFAULTS.perClient, maxConnections: defaultMaxConnections() });
  });

  it.each([
    ['IKI_HEADERS_TIMEOUT_SECONDS', 'headersTimeoutMs', 300],
    ['IKI_BODY_TIMEOUT_SECONDS', 'bodyTimeoutMs', 3600],
    ['IKI_REQUEST_TIMEOUT_SECONDS', 'requestTimeoutMs', 86_400],
    ['IKI_TRANSFER_STALL_SECONDS', 'transferStallMs', 3600],
  ] as const)('reads %s in seconds from 1 to its maximum, and refuses 0 and one past', (name, key, max) => {
    expect(loadConfig({ [name]: '1' }).connections[key]).toBe(1000);
    expect(loadConfig({ [name]: String(max) }).connections[key]).toBe(max * 1000);
    expect(problems({ [name]: '0' })).toEqual([`${name} must be an integer from 1 to ${max}`]);
    expect(problems({ [name]: String(max + 1) })).toEqual([`${name} must be an integer from 1 to ${max}`]);
  });

  it('reads the connection caps at their limits and refuses just past them', () => {
    expect(loadConfig({ IKI_MAX_CONNECTIONS_PER_CLIENT: '1' }).connections.perClient).toBe(1);
    expect(loadConfig({ IKI_MAX_CONNECTIONS_PER_CLIENT: '1000000' }).connections.perClient).toBe(1_000_000);
    expect(problems({ IKI_MAX_CONNECTIONS_PER_CLIENT: '0' })).toHaveLength(1);
    expect(problems({ IKI_MAX_CONNECTIONS_PER_CLIENT: '1000001' })).toHaveLength(1);
    expect(loadConfig({ IKI_MAX_CONNECTIONS: '1' }).connections.maxConnections).toBe(1);
    expect(problems({ IKI_MAX_CONNECTIONS: '0' })).toHaveLength(1);
    expect(problems({ IKI_MAX_CONNECTIONS: '10000001' })).toHaveLength(1);
  });

  it('keeps 512 descriptors of the open-file limit for everything but connections', () => {
    expect(maxConnectionsUnder(20_000)).toBe(19_488);
    expect(maxConnectionsUnder(256)).toBe(64);
    expect(maxConnectionsUnder(undefined)).toBe(10_000);
    // This process's own limit is read on Linux.
    if (process.platform === 'linux') expect(openFileLimit()).toBeGreaterThan(0);
  });
});

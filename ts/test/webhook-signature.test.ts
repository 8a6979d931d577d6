// Webhook signatures (issue 26 item 4, the verification helper of @iki/core): the header is
// Stripe's documented scheme, so a signature computed independently with node:crypto as Stripe's
// "manual verification" describes (HMAC-SHA256 of "<t>.<raw body>" with the endpoint secret,
// hex, in `t=…,v1=…`) verifies, also as Stripe sends it beside a v0 entry and during a secret
// roll (two v1 entries); a changed byte, another secret, a re-serialised body, a timestamp past
// the tolerance or a malformed header does not. The limits at and just past them.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature, WEBHOOK_TOLERANCE_SECONDS } from '../src/webhook-signature.js';

const SECRET = 'whsec_test_0123456789abcdefFAKE';
const BODY = '{"id":"evt_1","type":"checkout.session.completed","data":{"object":{"amount_total":1200}}}';
const T = 1_900_000_000;
const at = (seconds: number) => new Date(seconds * 1000);
/** Stripe's scheme, computed the way its documentation's manual verification does. */
const stripeV1 = (secret: string, t: number, body: string) => createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex');

describe('webhook signatures', () => {
  it('sign and verify agree with Stripe\'s documented scheme computed independently', async () => {
    const header = await signWebhook(SECRET, BODY, T);
    expect(header).toBe(`t=${T},v1=${stripeV1(SECRET, T, BODY)}`);
    expect(await verifyWebhookSignature(SECRET, header, BODY, { now: at(T) })).toEqual({ valid: true, timestamp: T });
    // As Stripe sends it: a v0 entry beside, spaces, and the raw body as bytes.
    const stripe = `t=${T}, v1=${stripeV1(SECRET, T, BODY)}, v0=${'0'.repeat(64)}`;
    expect(await verifyWebhookSignature(SECRET, stripe, new TextEncoder().encode(BODY), { now: at(T + 10) })).toMatchObject({ valid: true });
    // While a secret is rolled, either of two v1 signatures may match.
    const rolled = `t=${T},v1=${stripeV1('whsec_old_FAKE', T, BODY)},v1=${stripeV1(SECRET, T, BODY)}`;
    expect((await verifyWebhookSignature(SECRET, rolled, BODY, { now: at(T) })).valid).toBe(true);
  });

  it('refuses a changed byte, another secret, a re-serialised body and a missing signature', async () => {
    const header = await signWebhook(SECRET, BODY, T);
    const refused = async (h: string, body: string, secret = SECRET) => verifyWebhookSignature(secret, h, body, { now: at(T) });
    expect(await refused(header, BODY.replace('1200', '1201'))).toEqual({ valid: false, reason: 'mismatch' });
    expect(await refused(header, BODY, 'whsec_other_FAKE')).toEqual({ valid: false, reason: 'mismatch' });
    expect(await refused(header, JSON.stringify(JSON.parse(BODY), null, 1))).toEqual({ valid: false, reason: 'mismatch' });
    expect(await refused(`t=${T},v0=${'a'.repeat(64)}`, BODY)).toEqual({ valid: false, reason: 'no_signature' });
    for (const bad of ['', 'v1=abc', `t=${T},t=${T},v1=${'a'.repeat(64)}`, `t=-5,v1=${'a'.repeat(64)}`, 'garbage', `=x,t=${T}`]) {
      expect((await refused(bad, BODY)).valid, bad).toBe(false);
    }
  });

  it(`accepts a timestamp ${WEBHOOK_TOLERANCE_SECONDS} s away and refuses one 301 s away; a header of 4096 characters is read, 4097 is not`, async () => {
    const header = await signWebhook(SECRET, BODY, T);
    for (const now of [T + 300, T - 300]) expect((await verifyWebhookSignature(SECRET, header, BODY, { now: at(now) })).valid).toBe(true);
    for (const now of [T + 301, T - 301]) {
      expect(await verifyWebhookSignature(SECRET, header, BODY, { now: at(now) })).toEqual({ valid: false, reason: 'timestamp_outside_tolerance' });
    }
    expect((await verifyWebhookSignature(SECRET, header, BODY, { now: at(T + 3600), toleranceSeconds: 3600 })).valid).toBe(true);
    expect((await verifyWebhookSignature(SECRET, header, BODY, { now: at(T + 10 ** 6), toleranceSeconds: 0 })).valid).toBe(true);
    const padded = (length: number) => `${header},${'x'.repeat(length - header.length - 4)}=yy`;
    expect(padded(4096)).toHaveLength(4096);
    expect((await verifyWebhookSignature(SECRET, padded(4096), BODY, { now: at(T) })).valid).toBe(true);
    expect(await verifyWebhookSignature(SECRET, padded(4097), BODY, { now: at(T) })).toEqual({ valid: false, reason: 'malformed' });
  });

  it('names a wrong argument with a TypeError or RangeError', async () => {
    await expect(signWebhook('', BODY, T)).rejects.toThrow(TypeError);
    await expect(signWebhook(SECRET, 5 as unknown as string, T)).rejects.toThrow(TypeError);
    await expect(signWebhook(SECRET, BODY, 1.5)).rejects.toThrow(RangeError);
    await expect(verifyWebhookSignature(SECRET, 't=1,v1=x', BODY, { toleranceSeconds: -1 })).rejects.toThrow(RangeError);
  });
});

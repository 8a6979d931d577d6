/**
 * Migration 42 (issue 28 item 1): the webhook fan-out trigger (`iki_webhook_fanout`, migrations
 * 33 and 35) returns before it builds an outbox row when the master's seller has no enabled
 * endpoint subscribed to the event's type. The trigger runs on every `events` insert, the key
 * release's included, and most sellers have no endpoint: the seller look-up and the endpoint
 * probe become one statement, and the `INSERT ... SELECT` (with its event id drawn from
 * `gen_random_uuid()`) is no longer planned and run for nothing. What it writes is unchanged:
 * the same rows for a seller with endpoints, none otherwise.
 */
import { FANOUT_WITH_NOTICES, splice } from './migrations-sell.js';

/** Migration 35's fan-out with the early return, derived from its text (`splice`). */
export const FANOUT_EARLY_RETURN = splice('migration 42', FANOUT_WITH_NOTICES, [
  ['  SELECT m.seller_id INTO seller FROM masters m WHERE m.id = NEW.master_id;\n',
    '  SELECT m.seller_id INTO seller FROM masters m WHERE m.id = NEW.master_id\n'
    + '    AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.seller_id = m.seller_id AND e.disabled_at IS NULL\n'
    + '      AND t = ANY (e.events));\n'],
]);

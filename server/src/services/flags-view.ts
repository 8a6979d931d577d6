/**
 * How a flag is shown over HTTP (issue 29 item 3; the OpenAPI document's `Flag`): the rule,
 * its window, what was measured against what, and whether it is open or was dismissed.
 */
import type { FlagRecord, FlagRule } from '../storage/flags-records.js';

/** A flag as the API returns it. */
export interface FlagView {
  id: string;
  licenseId: string;
  masterId: string;
  rule: FlagRule;
  raisedAt: string;
  windowStart: string;
  windowEnd: string;
  value: number;
  threshold: number;
  state: 'open' | 'dismissed';
  dismissedAt: string | null;
}

/** The view of a stored flag. */
export function flagView(f: FlagRecord): FlagView {
  return {
    id: f.id, licenseId: f.licenseId, masterId: f.masterId, rule: f.rule, raisedAt: f.raisedAt.toISOString(),
    windowStart: f.windowStart.toISOString(), windowEnd: f.windowEnd.toISOString(), value: f.value,
    threshold: f.threshold, state: f.dismissedAt === undefined ? 'open' : 'dismissed',
    dismissedAt: f.dismissedAt === undefined ? null : f.dismissedAt.toISOString(),
  };
}

/**
 * Flags for the seller (issue 29 item 3): the open (or dismissed) flags of their masters'
 * licenses, newest first, and dismissing one. A flag of another seller's license is not found,
 * as the license itself would be. Raising flags is the sweeper's (services/flags-sweep.ts).
 */
import { ApiError } from '../errors.js';
import type { Repository } from '../storage/repository.js';
import { flagView, type FlagView } from './flags-view.js';

/** Flags in one page of `GET /api/seller/flags`. */
export const FLAGS_PAGE = 100;

/** Dependencies of the flag service. */
export interface FlagDeps {
  repo: Repository;
  now: () => Date;
}

/** The seller's flags. */
export class FlagService {
  constructor(private readonly deps: FlagDeps) {}

  /** One page of the seller's flags in `state`, before the cursor `before`; `next` pages on. */
  async list(sellerId: string, state: 'open' | 'dismissed' | 'all', before: string | undefined):
  Promise<{ flags: FlagView[]; next: string | null }> {
    const flags = await this.deps.repo.flags.list({ sellerId, state, limit: FLAGS_PAGE, before });
    return { flags: flags.map(flagView), next: flags.length === FLAGS_PAGE ? flags.at(-1)?.seq ?? null : null };
  }

  /** Dismisses a flag of one of the seller's licenses (again: the same answer). */
  async dismiss(sellerId: string, licenseId: string, flagId: string): Promise<FlagView> {
    const flag = await this.deps.repo.flags.dismiss(licenseId, flagId, sellerId, this.deps.now());
    if (flag === undefined) throw new ApiError('FLAG_NOT_FOUND', 'no such flag');
    return flagView(flag);
  }
}

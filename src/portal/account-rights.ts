/**
 * The signed-in user's account as the portal's pages act on it: the rights of the API caller
 * the user is (their account's licences, groups, rate limit and quota) and the surveys it may
 * use. Read once per request, when first needed: however many parts of a page need it, the
 * account is one read, and every part sees the same state of it.
 */
import { accountById, portalCallerId, type Database, type DbKeyStore } from '../access/index.js';
import type { ApiKeyRecord } from '../http/index.js';
import type { CatalogDataset } from '../http/survey-catalog.js';
import type { Session } from './sessions.js';
import { accountCatalog, accountRights } from './surveys-page.js';

export interface AccountRights {
  /** The API caller the signed-in user is (its id that of the user's portal calls). */
  caller: ApiKeyRecord;
  /** The surveys the account may use. */
  catalog: ReturnType<typeof accountCatalog>;
}

/** A request's account rights: read when first needed, then the same for the rest of the request. */
export type RequestRights = () => Promise<AccountRights>;

/** The rights of `session`'s account for one request; `keys` is told its rate limit and quota as the database says them now. */
export function requestRights(db: Database, keys: DbKeyStore, surveys: readonly CatalogDataset[], session: Session): RequestRights {
  let read: Promise<AccountRights> | undefined;
  return () =>
    (read ??= accountById(db, session.accountId).then((account) => {
      // The same admission as the account's keys.
      keys.noteAccountLimits(account);
      return { caller: { ...accountRights(account), id: portalCallerId(session.userId), userId: session.userId }, catalog: accountCatalog(account, surveys, undefined) };
    }));
}

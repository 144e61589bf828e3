import type { Database } from './database.js';
import { addAccount, listAccounts } from './accounts.js';
import { addKey } from './api-keys.js';
import { addUser } from './users.js';

export const DEVELOPMENT_ACCOUNT = 'development';
export const DEVELOPMENT_USER = 'developer@localhost.localdomain';

/**
 * On an empty database (a first `npm start`), creates a development account licensing
 * every served survey with every group, a portal user with a one-time password and a key
 * valid for 24 hours. Returns them once; undefined when the database already has accounts.
 */
export async function seedDevelopmentAccount(db: Database, surveys: readonly string[]): Promise<{ email: string; oneTimePassword: string; apiKey: string } | undefined> {
  if ((await listAccounts(db)).length > 0) return undefined;
  await addAccount(db, DEVELOPMENT_ACCOUNT, new Map(surveys.map((survey) => [survey, ['_ALL_']])));
  const { oneTimePassword } = await addUser(db, DEVELOPMENT_ACCOUNT, DEVELOPMENT_USER);
  const { apiKey } = await addKey(db, { account: DEVELOPMENT_ACCOUNT, name: 'development', expiresAt: new Date(Date.now() + 24 * 3600 * 1000) });
  return { email: DEVELOPMENT_USER, oneTimePassword, apiKey };
}

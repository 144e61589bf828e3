import { accountOfKey, addKey, badInput, findAccount, listKeys, parseExpiry, revokeKey, rotateKey, type KeyInfo } from '../access/index.js';
import { print, withDatabase } from './database-option.js';
import { formatTable } from './format-table.js';

/** A flag that one mode of a command needs. */
export function requireFlag<T>(value: T | undefined, flag: string, when: string): T {
  if (value === undefined) throw badInput(flag, `is required ${when}.`);
  return value;
}

function printKey(apiKey: string, key: KeyInfo, account: string, json: boolean | undefined): void {
  print(json, { apiKey, account, ...key }, () =>
    [
      `created key ${key.id} "${key.name}" of account ${account}; expires ${key.expiresAt ?? 'never'}`,
      'Store this API key now: it is shown only once (the database keeps only its sha256).',
      '',
      apiKey,
      '',
      'Send it as the header "Service-Engine-Authorizer: <key>", from a server, never from a browser.',
    ].join('\n'),
  );
}

/** The database side of `crosstab keys` (the default when --keys is not given). */
export function databaseKeyCommands() {
  return {
    async add(options: { account?: string; name?: string; expires?: string; surveys?: string[]; groups?: string[]; json?: boolean; database?: string }) {
      const account = requireFlag(options.account, '--account', 'to create a key of an account (or give --keys FILE for a key file)');
      if (options.surveys !== undefined || options.groups !== undefined) {
        throw badInput(options.surveys !== undefined ? '--surveys' : '--groups', 'applies to key files (--keys) only: a key of an account carries the account\'s licences.', `Change the licences with \`crosstab accounts update ${account} --surveys ... --groups ...\`.`);
      }
      const expiresAt = parseExpiry(options.expires);
      const { apiKey, key } = await withDatabase(options.database, (db) => addKey(db, { account, name: options.name, expiresAt }));
      printKey(apiKey, key, account, options.json);
    },
    async list(options: { account?: string; json?: boolean; database?: string }) {
      const account = requireFlag(options.account, '--account', 'to list the keys of an account (or give --keys FILE)');
      const keys = await withDatabase(options.database, async (db) => listKeys(db, (await findAccount(db, account)).id));
      print(options.json, keys, () =>
        formatTable(['id', 'name', 'status', 'created', 'expires', 'revoked'], keys.map((k) => [k.id, k.name, k.status, k.createdAt, k.expiresAt ?? 'never', k.revokedAt ?? ''])),
      );
    },
    async revoke(keyId: string, options: { database?: string }) {
      const key = await withDatabase(options.database, async (db) => revokeKey(db, await accountOfKey(db, keyId, '<key>'), keyId, { field: '<key>' }));
      process.stdout.write(`revoked key ${key.id} "${key.name}" at ${key.revokedAt}; every server refuses it within a second\n`);
    },
    async rotate(keyId: string, options: { grace: string; expires?: string; json?: boolean; database?: string }) {
      if (options.expires !== undefined) throw badInput('--expires', 'applies to key files (--keys) only: a rotated account key keeps the expiry of the old one.');
      const grace = Number(options.grace);
      const rotated = await withDatabase(options.database, async (db) => rotateKey(db, await accountOfKey(db, keyId, '<key>'), keyId, { graceSeconds: grace, field: '<key>' }));
      if (!options.json) process.stdout.write(`old key ${rotated.old.id} stops working at ${rotated.old.revokedAt}\n`);
      printKey(rotated.apiKey, rotated.key, rotated.key.accountId, options.json);
    },
  };
}

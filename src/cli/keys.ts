import type { Command } from 'commander';
import { addApiKey, keyStatus, readKeyFile, revokeApiKey, rotateApiKey, type ApiKeyRecord } from '../http/index.js';
import { formatTable } from './format-table.js';
import { badInput } from '../access/index.js';
import { databaseKeyCommands, requireFlag } from './keys-database.js';
import { databaseOption } from './database-option.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function describe(record: ApiKeyRecord): string {
  const name = record.name ? ` (${record.name})` : '';
  return `${record.id}${name}: surveys ${record.surveys.join(', ')}; groups ${record.groups.join(', ')}; expires ${record.expiresAt ?? 'never'}`;
}

function printNewKey(apiKey: string, record: ApiKeyRecord, file: string, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ apiKey, ...record, hash: undefined })}\n`);
    return;
  }
  process.stdout.write(`created ${describe(record)}\n`);
  process.stdout.write(`Store this API key now: it is shown only once (${file} keeps only its sha256).\n\n${apiKey}\n\n`);
  process.stdout.write(`Send it as the header "Service-Engine-Authorizer: <key>", from a server, never from a browser.\n`);
}

/** `crosstab keys add|list|revoke|rotate`: API keys of accounts (the database) or of a key file (--keys). */
export function registerKeysCommand(program: Command): void {
  const keys = program
    .command('keys')
    .description('manage API keys of `crosstab serve`: of accounts in the database, or in a key file with --keys (only hashes are stored; changes apply without a restart)');

  const database = databaseKeyCommands();
  databaseOption(keys.command('add'))
    .description('create an API key and print it once: of an account (--account, in the database) or in a key file (--keys)')
    .option('--account <name>', 'account the key belongs to (database mode); the key carries the account\'s rights at each call')
    .option('--keys <file>', 'key file (created if missing); file mode, needs --surveys and --groups')
    .option('--surveys <codes>', 'file mode: SurveyCodes the key may query, comma-separated or repeated; _ALL_ = every survey', collect)
    .option('--groups <groups>', 'file mode: authorization groups the key may use, comma-separated or repeated; _ALL_ = every group', collect)
    .option('--expires <date-time>', 'expiry, ISO 8601 (e.g. 2027-01-01T00:00:00Z); default: never')
    .option('--name <name>', 'the environment the key is for, e.g. production or staging (required with --account)')
    .option('--json', 'print {apiKey, id, ...} as JSON')
    .action(async (options: { keys?: string; account?: string; surveys?: string[]; groups?: string[]; expires?: string; name?: string; json?: boolean; database?: string }) => {
      if (options.keys === undefined) return database.add(options);
      if (options.account !== undefined) throw badInput('--account', 'cannot be combined with --keys: a key belongs to an account (database) or to a key file.');
      const { apiKey, record } = await addApiKey(options.keys, {
        surveys: requireFlag(options.surveys, '--surveys', 'with --keys'),
        groups: requireFlag(options.groups, '--groups', 'with --keys'),
        ...(options.expires === undefined ? {} : { expiresAt: options.expires }),
        ...(options.name === undefined ? {} : { name: options.name }),
      });
      printNewKey(apiKey, record, options.keys, options.json === true);
    });

  databaseOption(keys.command('list'))
    .description('list keys (ids, entitlements, status; never the keys) of an account or a key file')
    .option('--account <name>', 'account (database mode)')
    .option('--keys <file>', 'key file (file mode)')
    .option('--json', 'print JSON')
    .action(async (options: { keys?: string; account?: string; json?: boolean; database?: string }) => {
      if (options.keys === undefined) return database.list(options);
      const file = await readKeyFile(options.keys);
      const now = Date.now();
      const rows = file.keys.map(({ hash: _hash, ...record }) => ({ ...record, status: keyStatus(record as ApiKeyRecord, now) }));
      if (options.json) {
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      const table = rows.map((row) => [row.id, row.name ?? '', row.status, row.surveys.join(','), row.groups.join(','), row.expiresAt ?? 'never', row.createdAt]);
      process.stdout.write(`${formatTable(['id', 'name', 'status', 'surveys', 'groups', 'expires', 'created'], table)}\n`);
    });

  databaseOption(keys.command('revoke'))
    .description('revoke a key (by id; in a key file also by name when one active key has it); every server refuses it within a second')
    .argument('<key>', 'key id (key_...) or name')
    .option('--keys <file>', 'key file (file mode; default: the database)')
    .action(async (key: string, options: { keys?: string; database?: string }) => {
      if (options.keys === undefined) return database.revoke(key, options);
      const record = await revokeApiKey(options.keys, key);
      process.stdout.write(`revoked ${describe(record)}\n`);
    });

  databaseOption(keys.command('rotate'))
    .description('issue a new key with the same entitlements and revoke the old one (database: after --grace seconds)')
    .argument('<key>', 'key id (key_...) or name')
    .option('--keys <file>', 'key file (file mode; default: the database)')
    .option('--expires <date-time>', 'file mode: expiry of the new key, ISO 8601; default: that of the old key')
    .option('--grace <seconds>', 'database mode: seconds the old key keeps working (default 0 = revoked now)', '0')
    .option('--json', 'print {apiKey, id, ...} as JSON')
    .action(async (key: string, options: { keys?: string; expires?: string; grace: string; json?: boolean; database?: string }) => {
      if (options.keys === undefined) return database.rotate(key, options);
      const rotated = await rotateApiKey(options.keys, key, options.expires === undefined ? {} : { expiresAt: options.expires });
      if (!options.json) process.stdout.write(`revoked ${describe(rotated.revoked)}\n`);
      printNewKey(rotated.apiKey, rotated.record, options.keys, options.json === true);
    });
}

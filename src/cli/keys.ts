import type { Command } from 'commander';
import { addApiKey, keyStatus, readKeyFile, revokeApiKey, rotateApiKey, type ApiKeyRecord } from '../http/index.js';
import { formatTable } from './output.js';

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

/** `crosstab keys add|list|revoke|rotate`: manage the API key file of `crosstab serve`. */
export function registerKeysCommand(program: Command): void {
  const keys = program
    .command('keys')
    .description('manage API keys of `crosstab serve` (the key file stores only hashes; changes apply without a restart)');

  keys
    .command('add')
    .description('create an API key and print it once')
    .requiredOption('--keys <file>', 'key file (created if missing)')
    .requiredOption('--surveys <codes>', 'SurveyCodes the key may query, comma-separated or repeated; _ALL_ = every survey', collect)
    .requiredOption('--groups <groups>', 'authorization groups the key may use, comma-separated or repeated; _ALL_ = every group', collect)
    .option('--expires <date-time>', 'expiry, ISO 8601 (e.g. 2027-01-01T00:00:00Z); default: never')
    .option('--name <name>', 'label shown by `keys list`, e.g. reporting-prod')
    .option('--json', 'print {apiKey, id, ...} as JSON')
    .action(async (options: { keys: string; surveys: string[]; groups: string[]; expires?: string; name?: string; json?: boolean }) => {
      const { apiKey, record } = await addApiKey(options.keys, {
        surveys: options.surveys,
        groups: options.groups,
        ...(options.expires === undefined ? {} : { expiresAt: options.expires }),
        ...(options.name === undefined ? {} : { name: options.name }),
      });
      printNewKey(apiKey, record, options.keys, options.json === true);
    });

  keys
    .command('list')
    .description('list keys (ids, entitlements, status; never the keys)')
    .requiredOption('--keys <file>', 'key file')
    .option('--json', 'print JSON')
    .action(async (options: { keys: string; json?: boolean }) => {
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

  keys
    .command('revoke')
    .description('revoke a key (by id, or by name when one active key has it); a running server refuses it within a second')
    .argument('<key>', 'key id (key_...) or name')
    .requiredOption('--keys <file>', 'key file')
    .action(async (key: string, options: { keys: string }) => {
      const record = await revokeApiKey(options.keys, key);
      process.stdout.write(`revoked ${describe(record)}\n`);
    });

  keys
    .command('rotate')
    .description('issue a new key with the same entitlements and revoke the old one')
    .argument('<key>', 'key id (key_...) or name')
    .requiredOption('--keys <file>', 'key file')
    .option('--expires <date-time>', 'expiry of the new key, ISO 8601; default: that of the old key')
    .option('--json', 'print {apiKey, id, ...} as JSON')
    .action(async (key: string, options: { keys: string; expires?: string; json?: boolean }) => {
      const rotated = await rotateApiKey(options.keys, key, options.expires === undefined ? {} : { expiresAt: options.expires });
      if (!options.json) process.stdout.write(`revoked ${describe(rotated.revoked)}\n`);
      printNewKey(rotated.apiKey, rotated.record, options.keys, options.json === true);
    });
}

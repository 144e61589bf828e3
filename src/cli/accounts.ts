import type { Command } from 'commander';
import { addAccount, badInput, findAccount, linkIssuer, listAccounts, listKeys, listUsers, parseLicences, parseLimit, updateAccount, type Account, type Licences } from '../access/index.js';
import { databaseOption, print, withDatabase } from './database-option.js';
import { formatTable } from './format-table.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function licenceText(account: Account): string {
  if (account.licences.length === 0) return 'no survey licensed';
  return account.licences.map(({ survey, groups }) => `${survey} [${groups.join(', ') || 'no permission yet'}]`).join('; ');
}

function describe(account: Account): string {
  const limits = `rate limit ${account.rateLimitPerMinute ?? 'none'}/min, monthly quota ${account.monthlyQuota ?? 'none'}`;
  return `${account.name} (${account.id})${account.disabled ? ' DISABLED' : ''}: ${licenceText(account)}; ${limits}`;
}

interface LicenceFlags {
  surveys?: string[];
  groups?: string[];
  rateLimit?: string;
  monthlyQuota?: string;
  json?: boolean;
  database?: string;
}

function limitsOf(options: LicenceFlags): { rateLimitPerMinute?: number | null; monthlyQuota?: number | null } {
  const rate = parseLimit(options.rateLimit, '--rate-limit');
  const quota = parseLimit(options.monthlyQuota, '--monthly-quota');
  return { ...(rate === undefined ? {} : { rateLimitPerMinute: rate }), ...(quota === undefined ? {} : { monthlyQuota: quota }) };
}

function licenceOptions(command: Command, required: boolean): Command {
  const surveys = 'licensed SurveyCodes, comma-separated or repeated (e.g. GSS,NHANES)';
  const groups = 'permission SURVEY:GROUP, repeatable (GSS:_ALL_ = every group of GSS, NHANES:demographics)';
  (required ? command.requiredOption('--surveys <codes>', surveys, collect) : command.option('--surveys <codes>', `${surveys}; replaces the licences`, collect))
    .option('--groups <survey:group>', groups, collect)
    .option('--rate-limit <n>', 'calls per minute allowed to the account, or "none"')
    .option('--monthly-quota <n>', 'billed calls per calendar month (UTC), or "none"');
  return command;
}

/** `crosstab accounts add|list|show|update|disable`: the provider's administration of accounts. */
export function registerAccountsCommand(program: Command): void {
  const accounts = program.command('accounts').description('manage customer accounts: licensed surveys, survey permissions, limits (in the access database)');

  databaseOption(licenceOptions(accounts.command('add').description('create an account with its licensed surveys and permissions'), true))
    .requiredOption('--name <name>', 'account name, e.g. acme')
    .option('--json', 'print the account as JSON')
    .action(async (options: LicenceFlags & { name: string }) => {
      const licences = parseLicences(options.surveys, options.groups);
      const account = await withDatabase(options.database, (db) => addAccount(db, options.name, licences, limitsOf(options)));
      print(options.json, account, () => `created account ${describe(account)}`);
    });

  databaseOption(accounts.command('list').description('list the accounts'))
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean; database?: string }) => {
      const list = await withDatabase(options.database, (db) => listAccounts(db));
      print(options.json, list, () =>
        formatTable(['name', 'id', 'status', 'licences', 'rate/min', 'quota/month'], list.map((a) => [a.name, a.id, a.disabled ? 'disabled' : 'active', licenceText(a), String(a.rateLimitPerMinute ?? '-'), String(a.monthlyQuota ?? '-')])),
      );
    });

  databaseOption(accounts.command('show').description('show an account, its users and its keys'))
    .argument('[name]', 'account name (or --account)')
    .option('--account <name>', 'account name')
    .option('--json', 'print JSON')
    .action(async (name: string | undefined, options: { account?: string; json?: boolean; database?: string }) => {
      const shown = await withDatabase(options.database, async (db) => {
        const account = await findAccount(db, name ?? options.account);
        return { ...account, users: await listUsers(db, account.id), keys: await listKeys(db, account.id) };
      });
      print(options.json, shown, () =>
        [
          describe(shown),
          `users: ${shown.users.map((u) => `${u.email}${u.mustChangePassword ? ' (one-time password not changed yet)' : ''}`).join(', ') || 'none'}`,
          `keys:  ${shown.keys.map((k) => `${k.id} ${k.name} ${k.status}${k.expiresAt ? ` expires ${k.expiresAt}` : ''}`).join('\n       ') || 'none'}`,
        ].join('\n'),
      );
    });

  databaseOption(licenceOptions(accounts.command('update').description('change licences, permissions or limits (keys follow on their next call), or --enable'), false))
    .argument('[name]', 'account name (or --account)')
    .option('--account <name>', 'account name')
    .option('--enable', 'enable a disabled account')
    .option('--json', 'print the account as JSON')
    .action(async (name: string | undefined, options: LicenceFlags & { account?: string; enable?: boolean }) => {
      let licences: Licences | undefined;
      if (options.surveys !== undefined) licences = parseLicences(options.surveys, options.groups);
      else if (options.groups !== undefined) throw badInput('--groups', 'needs --surveys: update replaces the licences as a whole.', 'Give --surveys with every licensed survey and --groups with every permission.');
      const account = await withDatabase(options.database, (db) =>
        updateAccount(db, name ?? options.account ?? '', { ...limitsOf(options), ...(licences === undefined ? {} : { licences }), ...(options.enable ? { disabled: false } : {}) }),
      );
      print(options.json, account, () => `updated account ${describe(account)}`);
    });

  databaseOption(accounts.command('link').description('single sign-on: let access tokens of an OpenID Connect issuer act for the account'))
    .requiredOption('--account <name>', 'account name')
    .requiredOption('--issuer <url>', 'issuer URL (the "iss" of its access tokens); `crosstab serve --oidc-issuer` must trust it too')
    .option('--subject <sub>', 'tokens with this "sub" (e.g. the client id of a client-credentials client)')
    .option('--claim <name=value>', 'tokens whose claim has this value (or an array holding it), e.g. org=acme')
    .option('--json', 'print the link as JSON')
    .action(async (options: { account: string; issuer: string; subject?: string; claim?: string; json?: boolean; database?: string }) => {
      const link = await withDatabase(options.database, (db) => linkIssuer(db, options));
      print(options.json, { account: options.account, ...link }, () => `linked ${link.claim}=${link.value} of ${link.issuer} to account ${options.account}`);
    });

  databaseOption(accounts.command('disable').description('disable an account: its keys and users stop working on their next call'))
    .argument('[name]', 'account name (or --account)')
    .option('--account <name>', 'account name')
    .option('--json', 'print the account as JSON')
    .action(async (name: string | undefined, options: { account?: string; json?: boolean; database?: string }) => {
      const account = await withDatabase(options.database, (db) => updateAccount(db, name ?? options.account ?? '', { disabled: true }));
      print(options.json, account, () => `disabled account ${describe(account)}`);
    });
}

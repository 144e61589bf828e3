import type { Command } from 'commander';
import { addUser, findAccount, listUsers, resetUserPassword, setUserDisabled, usageReport } from '../access/index.js';
import { databaseOption, print, withDatabase } from './database-option.js';
import { formatTable } from './format-table.js';

/** `crosstab users add|list|reset-password|disable|enable`: the people of an account who sign in to the developer portal. */
export function registerUsersCommand(program: Command): void {
  const users = program.command('users').description('manage the portal users of an account');
  databaseOption(users.command('add').description('add a user and print a one-time password (the first sign-in replaces it)'))
    .requiredOption('--account <name>', 'account name')
    .requiredOption('--email <address>', 'the user\'s e-mail address (the sign-in name)')
    .option('--json', 'print {email, oneTimePassword, ...} as JSON')
    .action(async (options: { account: string; email: string; json?: boolean; database?: string }) => {
      const { user, oneTimePassword } = await withDatabase(options.database, (db) => addUser(db, options.account, options.email));
      print(options.json, { ...user, account: options.account, oneTimePassword }, () =>
        `created user ${user.email} of account ${options.account}\nOne-time password (shown once; the first portal sign-in must change it):\n\n${oneTimePassword}\n`,
      );
    });
  databaseOption(users.command('list').description('list the users of an account'))
    .requiredOption('--account <name>', 'account name')
    .option('--json', 'print JSON')
    .action(async (options: { account: string; json?: boolean; database?: string }) => {
      const list = await withDatabase(options.database, async (db) => listUsers(db, (await findAccount(db, options.account)).id));
      print(options.json, list, () =>
        formatTable(['email', 'id', 'password', 'status', 'created'], list.map((u) => [u.email, u.id, u.mustChangePassword ? 'one-time' : 'set', u.disabled ? 'disabled' : 'active', u.createdAt])),
      );
    });
  databaseOption(users.command('reset-password').description('give a user a new one-time password, lift a lockout and end the user\'s portal sessions'))
    .requiredOption('--email <address>', 'the user\'s e-mail address')
    .option('--json', 'print {email, oneTimePassword, ...} as JSON')
    .action(async (options: { email: string; json?: boolean; database?: string }) => {
      const { user, oneTimePassword } = await withDatabase(options.database, (db) => resetUserPassword(db, options.email));
      print(options.json, { ...user, oneTimePassword }, () =>
        `reset the password of ${user.email}; its portal sessions are ended\nOne-time password (shown once; the next portal sign-in must change it):\n\n${oneTimePassword}\n`,
      );
    });
  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    databaseOption(
      users.command(name).description(disabled ? 'stop a user from signing in to the portal and end its sessions now (the account\'s keys keep working)' : 'let a disabled user sign in again'),
    )
      .requiredOption('--email <address>', 'the user\'s e-mail address')
      .option('--json', 'print the user as JSON')
      .action(async (options: { email: string; json?: boolean; database?: string }) => {
        const user = await withDatabase(options.database, (db) => setUserDisabled(db, options.email, disabled));
        print(options.json, user, () => `${disabled ? 'disabled' : 'enabled'} user ${user.email}\n`);
      });
  }
}

/** `crosstab usage`: billed calls of an account. */
export function registerUsageCommand(program: Command): void {
  databaseOption(program.command('usage').description('billed calls of an account (200s of POST /crosstab and POST /tables), in total and per key, day, survey or operation'))
    .requiredOption('--account <name>', 'account name')
    .option('--from <date>', 'start, inclusive: 2026-11-01 or an ISO 8601 date-time')
    .option('--to <date>', 'end: a date counts that whole day; a date-time is exclusive')
    .option('--by <grouping>', 'rows per key, day, survey or operation', 'day')
    .option('--json', 'print {account, calls, rows} as JSON')
    .action(async (options: { account: string; from?: string; to?: string; by: string; json?: boolean; database?: string }) => {
      const report = await withDatabase(options.database, (db) => usageReport(db, options));
      print(options.json, report, () => {
        const columns = report.by === 'key' ? ['key', 'name', 'calls'] : [report.by, 'calls'];
        const rows = report.rows.map((row) => columns.map((column) => String((row as Record<string, unknown>)[column] ?? '')));
        return `${report.account}: ${report.calls} billed calls from ${report.from ?? 'the start'} to ${report.to ?? 'now'}\n\n${formatTable(columns, rows)}`;
      });
    });
}

import type { Command } from 'commander';
import { databaseLocation, openDatabase, type Database } from '../access/index.js';

/** Adds `--database URL|DIR` to a command (the same default for every command and serve). */
export function databaseOption(command: Command): Command {
  return command.option('--database <url|dir>', 'postgres://user:password@host:port/db, or the folder of an embedded database (default: $CROSSTAB_DATABASE or .crosstab/db)');
}

/** An administration command's longest wait for one statement (a usage report over a long history can take a while). */
const ADMIN_TIMEOUT_MS = 300_000;

/** Opens the database, runs `work`, and closes the database whatever happens. */
export async function withDatabase<T>(flag: string | undefined, work: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(databaseLocation(flag), { poolSize: 2, timeoutMs: ADMIN_TIMEOUT_MS });
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

/** Prints JSON (with --json) or text lines. */
export function print(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

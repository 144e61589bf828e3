#!/usr/bin/env node
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exampleDataset, exampleSource, packageRoot } from './bundled.js';
import { reportError } from './output.js';

// A reader that stops early (`crosstab info x.arrow | head -1`) is not an error: exit quietly.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const { version } = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string };

const program = new Command('crosstab')
  .description('exact, fast crosstabs over weighted survey data')
  .version(version, '-V, --version', 'print the crosstab-engine version')
  .showHelpAfterError('(run with --help for usage)')
  .addHelpText(
    'after',
    `
Examples:
  $ crosstab demo                                    a crosstab on the bundled GSS data
  $ crosstab build ${exampleSource('gss').data} --weight wtssps --survey GSS --codebook ${exampleSource('gss').codebook} --out gss.arrow
  $ crosstab info ${exampleDataset('gss')}         variables, value labels, codes
  $ crosstab query ${exampleDataset('gss')} --base 'year=2024' --target 'sex=Female' --target 'degree=3..4'
  $ crosstab table ${exampleDataset('gss')} --rows sex --columns degree --stats vpct,sig
  $ crosstab tabbook ${exampleDataset('gss')} --banner sex,race,degree --stubs all --out book.xlsx
  $ crosstab keys add --keys keys.json --surveys GSS --groups _ALL_
  $ crosstab serve --dataset ${exampleDataset('gss')} --keys keys.json
  $ crosstab push ${exampleDataset('gss')} --clickhouse clickhouse://127.0.0.1:8123/surveys

Run \`crosstab <command> --help\` for a command's options.`,
  );
type Register = (program: Command) => void;

/**
 * Each command's module, loaded on demand: a command's dependencies (the input readers for
 * build, the HTTP server and database for serve, the report formats for table) are loaded
 * only when that command runs, so that a cold `crosstab query` loads what a query needs and
 * nothing else. In help order.
 */
const commands: Array<[string, () => Promise<Register>]> = [
  ['build', async () => (await import('./build.js')).registerBuildCommand],
  ['append', async () => (await import('./append.js')).registerAppendCommand],
  ['query', async () => (await import('./query.js')).registerQueryCommand],
  ['table', async () => (await import('./table.js')).registerTableCommand],
  ['tabbook', async () => (await import('./tabbook.js')).registerTabbookCommand],
  ['info', async () => (await import('./info.js')).registerInfoCommand],
  ['verify', async () => (await import('./verify.js')).registerVerifyCommand],
  ['weight', async () => (await import('./weight.js')).registerWeightCommand],
  ['serve', async () => (await import('./serve.js')).registerServeCommand],
  ['push', async () => (await import('./push.js')).registerPushCommand],
  ['keys', async () => (await import('./keys.js')).registerKeysCommand],
  ['accounts', async () => (await import('./accounts.js')).registerAccountsCommand],
  ['users', async () => (await import('./users.js')).registerUsersCommand],
  ['usage', async () => (await import('./users.js')).registerUsageCommand],
  ['demo', async () => (await import('./demo.js')).registerDemoCommand],
];

async function run(): Promise<void> {
  // The command named first on the line; none for --version; every command for help or a typo.
  const first = process.argv[2];
  const named = commands.find(([name]) => name === first);
  const needed = named ? [named] : first === '-V' || first === '--version' ? [] : commands;
  for (const [, load] of needed) (await load())(program);
  await program.parseAsync(process.argv);
}

run().catch((error: unknown) => {
  process.exitCode = reportError(error);
});

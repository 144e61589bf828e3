#!/usr/bin/env node
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './bundled.js';
import { registerAccountsCommand } from './accounts.js';
import { registerBuildCommand } from './build.js';
import { registerDemoCommand } from './demo.js';
import { registerInfoCommand } from './info.js';
import { registerKeysCommand } from './keys.js';
import { reportError } from './output.js';
import { registerPushCommand } from './push.js';
import { registerQueryCommand } from './query.js';
import { registerServeCommand } from './serve.js';
import { registerTableCommand } from './table.js';
import { registerVerifyCommand } from './verify.js';

// A reader that stops early (`crosstab info x.arrow | head -1`) is not an error: exit quietly.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const { version } = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string };
import { registerUsageCommand, registerUsersCommand } from './users.js';

const program = new Command('crosstab')
  .description('exact, fast crosstabs over weighted survey data')
  .version(version, '-V, --version', 'print the crosstab-engine version')
  .showHelpAfterError('(run with --help for usage)')
  .addHelpText(
    'after',
    `
Examples:
  $ crosstab demo                                    a crosstab on the bundled GSS data
  $ crosstab build survey.csv.gz --weight wtssps --survey GSS --out gss.arrow
  $ crosstab info gss.arrow                          variables, value labels, codes
  $ crosstab query gss.arrow --base 'year=2024' --target 'sex=Female' --target 'degree=3..4'
  $ crosstab table gss.arrow --rows sex --columns degree --stats vpct,sig
  $ crosstab keys add --keys keys.json --surveys GSS --groups _ALL_
  $ crosstab serve --dataset gss.arrow --keys keys.json
  $ crosstab push gss.arrow --clickhouse clickhouse://127.0.0.1:8123/surveys

Run \`crosstab <command> --help\` for a command's options.`,
  );
registerBuildCommand(program);
registerQueryCommand(program);
registerTableCommand(program);
registerInfoCommand(program);
registerVerifyCommand(program);
registerServeCommand(program);
registerPushCommand(program);
registerKeysCommand(program);
registerAccountsCommand(program);
registerUsersCommand(program);
registerUsageCommand(program);
registerDemoCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  process.exitCode = reportError(error);
});

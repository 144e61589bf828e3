#!/usr/bin/env node
import { Command } from 'commander';
import { registerAccountsCommand } from './accounts.js';
import { registerBuildCommand } from './build.js';
import { registerDemoCommand } from './demo.js';
import { registerInfoCommand } from './info.js';
import { registerKeysCommand } from './keys.js';
import { reportError } from './output.js';
import { registerQueryCommand } from './query.js';
import { registerServeCommand } from './serve.js';
import { registerTableCommand } from './table.js';
import { registerUsageCommand, registerUsersCommand } from './users.js';

const program = new Command('crosstab')
  .description('exact, fast crosstabs over weighted survey data')
  .showHelpAfterError('(run with --help for usage)');
registerBuildCommand(program);
registerQueryCommand(program);
registerTableCommand(program);
registerInfoCommand(program);
registerServeCommand(program);
registerKeysCommand(program);
registerAccountsCommand(program);
registerUsersCommand(program);
registerUsageCommand(program);
registerDemoCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  process.exitCode = reportError(error);
});

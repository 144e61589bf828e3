import { type Command, InvalidArgumentError } from 'commander';
import { pushDataset } from '../clickhouse/push.js';
import { formatNumber } from './output.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

interface PushFlags {
  clickhouse: string;
  table?: string;
  cluster?: string;
  shards?: number;
  shardUrl?: string[];
  replace?: boolean;
  quiet?: boolean;
}

export function registerPushCommand(program: Command): void {
  program
    .command('push')
    .description('load a compiled dataset into ClickHouse (a MergeTree per shard and a Distributed table), to query it with clickhouse:// URLs')
    .argument('<dataset>', 'dataset file from `crosstab build`')
    .requiredOption('--clickhouse <url>', '(required) the server to query through: clickhouse://host:8123/database[?table=NAME] (its HTTP port)')
    .option('--table <name>', 'table name (default: the URL\'s table=, else the survey code in lower case)')
    .option('--cluster <name>', 'a remote_servers cluster of the server: one MergeTree table per shard, a Distributed table over them')
    .option('--shards <n>', 'the number of shards --cluster must have (checked)', (value: string) => {
      const number = Number(value);
      if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError(`--shards must be a positive integer, not "${value}"`);
      return number;
    })
    .option('--shard-url <url>', 'HTTP URL of a shard of --cluster, in the cluster\'s order (repeat for each shard)', collect)
    .option('--replace', 'drop the dataset\'s tables first when they exist')
    .option('--quiet', 'print nothing but errors')
    .action(async (path: string, flags: PushFlags) => {
      let lastPrinted = 0;
      const report = await pushDataset(path, {
        clickhouse: flags.clickhouse,
        ...(flags.table === undefined ? {} : { table: flags.table }),
        ...(flags.cluster === undefined ? {} : { cluster: flags.cluster }),
        ...(flags.shards === undefined ? {} : { shards: flags.shards }),
        ...(flags.shardUrl === undefined ? {} : { shardUrls: flags.shardUrl }),
        replace: flags.replace === true,
        onProgress: (pushed, total) => {
          if (flags.quiet || !process.stderr.isTTY || performance.now() - lastPrinted < 500) return;
          lastPrinted = performance.now();
          process.stderr.write(`\rpushed ${formatNumber(pushed, 0)} of ${formatNumber(total, 0)} respondents`);
        },
      });
      if (!flags.quiet) {
        if (process.stderr.isTTY) process.stderr.write('\n');
        process.stdout.write(
          `pushed ${formatNumber(report.respondents, 0)} respondents (${report.variables} variables, ${report.weights} weights) to ${report.shards} shard${report.shards === 1 ? '' : 's'} in ${formatNumber(report.seconds)} s\n` +
            `open it as ${report.url}\n`,
        );
      }
    });
}

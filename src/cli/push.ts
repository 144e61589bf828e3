import { type Command, InvalidArgumentError } from 'commander';
import { pushDataset } from '../clickhouse/push.js';
import { formatNumber } from '../text/number-text.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

interface PushFlags {
  clickhouse: string;
  table?: string;
  cluster?: string;
  shards?: number;
  shardUrl?: string[];
  replace?: boolean;
  keepVersions?: number;
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
    .option('--shard-url <url>', 'HTTP URL of a shard of --cluster (repeat for each shard, any order; checked against the cluster)', collect)
    .option('--replace', 'publish a new version of a dataset that exists; readers keep the version they opened')
    .option('--keep-versions <n>', 'replaced versions kept for readers that opened them (default 1; older ones are removed)', (value: string) => {
      const number = Number(value);
      if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError(`--keep-versions must be a whole number from 0, not "${value}"`);
      return number;
    })
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
        ...(flags.keepVersions === undefined ? {} : { keepVersions: flags.keepVersions }),
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
            `published as version ${report.version}${report.removedVersions.length > 0 ? ` (removed version${report.removedVersions.length === 1 ? '' : 's'} ${report.removedVersions.join(', ')})` : ''}\n` +
            `open it as ${report.url}\n`,
        );
      }
    });
}

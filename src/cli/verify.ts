import type { Command } from 'commander';
import { openDataset } from '../facade/dataset.js';
import { formatNumber } from '../text/number-text.js';

export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('check every byte of a dataset against its checksums (exit 1 if damaged)')
    .argument('<dataset>', 'dataset file from `crosstab build`')
    .action(async (path: string) => {
      const started = performance.now();
      const ds = await openDataset(path, { verify: 'full', execution: 'inline' });
      try {
        const { buffers, bytes } = ds.verify();
        const ms = performance.now() - started;
        process.stdout.write(`ok: ${buffers} buffers, ${formatNumber(bytes / 1e6)} MB and the metadata match their checksums (${formatNumber(ms, 0)} ms); ${
            ds.info.weightsFile ? `dataset checksum ${ds.info.weightsFile.datasetChecksum}; weights file ${ds.info.weightsFile.file} (${ds.info.weightsFile.weights.join(', ')}) checksum ${ds.info.weightsFile.checksum}` : `dataset checksum ${ds.info.checksum}`
          }\n`);
      } finally {
        ds.close();
      }
    });
}

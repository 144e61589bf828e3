import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { CrosstabError, ErrorCode, openDataset, type Dataset } from '../index.js';
import { addApiKey, createCrosstabHandler, listen, writeKeyFile, FileKeyStore, KEY_FILE_FORMAT, NdjsonLedger, type AccessLogEntry, type KeyStore } from '../http/index.js';
import { bundledDatasets, bundledDatasetsHint } from './bundled.js';

interface ServeOptions {
  dataset?: string[];
  keys?: string;
  port: string;
  host: string;
  basePath: string;
  corsOrigin?: string[];
  ledger: string;
  maxBodyBytes: string;
  publicUrl?: string;
  accessLog?: boolean;
  maxConnections?: string;
  maxConnectionsPerAddress?: string;
  idleTimeout: string;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
const DEV_FOLDER = '.crosstab';

function integerOption(value: string, option: string, min: number, max: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new CrosstabError(ErrorCode.invalidOption, `${option} must be an integer from ${min} to ${max}; got ${JSON.stringify(value)}.`, { field: option });
  }
  return number;
}

const DEV_KEYS = join(DEV_FOLDER, 'dev-keys.json');

/**
 * The development key store: knows no key until the server listens, then the fresh key file.
 * So a second `crosstab serve` that cannot get the port leaves the first one's key file alone.
 */
class DevelopmentKeyStore implements KeyStore {
  private store: KeyStore | undefined;
  use(store: KeyStore): void {
    this.store = store;
  }
  lookup(apiKey: string): ReturnType<KeyStore['lookup']> {
    return this.store?.lookup(apiKey) ?? Promise.resolve(undefined);
  }
  close(): Promise<void> {
    return this.store?.close() ?? Promise.resolve();
  }
}

/** A fresh key file holding one development key (every survey and group, valid for 24 hours). */
async function createDevelopmentKey(): Promise<{ path: string; apiKey: string }> {
  const path = DEV_KEYS;
  await writeKeyFile(path, { format: KEY_FILE_FORMAT, keys: [] });
  const { apiKey } = await addApiKey(path, {
    surveys: ['_ALL_'],
    groups: ['_ALL_'],
    name: 'development',
    expiresAt: new Date(Date.now() + 24 * 3600 * 1000),
  });
  return { path, apiKey };
}

function exampleTargets(dataset: Dataset): string[] {
  const code = dataset.info.codes[0];
  if (code) return [code.name];
  const variable = dataset.info.variables.find((v) => v.values && v.values.length > 0);
  return variable?.values?.[0] ? [`${variable.name}=${variable.values[0].value}`] : ['*'];
}

/** `crosstab serve`: the REST API over node:http, with graceful shutdown on SIGTERM/SIGINT. */
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the REST API: GET <base>/docs, POST <base>/crosstab, OPTIONS <base>/crosstab')
    .option('--dataset <file>', 'compiled dataset to serve, repeatable (default: the bundled datasets/build/*.arrow)', collect)
    .option('--keys <file>', 'API key file from `crosstab keys add` (default: a new development key in .crosstab/dev-keys.json, printed once)')
    .option('--port <n>', 'TCP port (0 = any free port)', '8080')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--base-path <path>', 'mount path, with a v1 segment', '/v1')
    .option('--cors-origin <origin>', 'allowed browser origin, repeatable (default: any origin)', collect)
    .option('--ledger <file>', 'usage ledger (NDJSON, one fsync\'d line per billed request)', join(DEV_FOLDER, 'usage.ndjson'))
    .option('--max-body-bytes <n>', 'largest accepted request body', '16384')
    .option('--public-url <url>', 'server URL advertised in GET /docs (default: the base path)')
    .option('--access-log', 'print one JSON line per request to stderr (never API keys)')
    .option('--max-connections <n>', 'most open connections; more are closed on arrival (default: ulimit -n minus 64, at most 4096)')
    .option('--max-connections-per-address <n>', 'most open connections from one IP address (default 64)')
    .option('--idle-timeout <seconds>', 'close a connection idle this long', '30')
    .action(async (options: ServeOptions) => {
      const port = integerOption(options.port, '--port', 0, 65535);
      const maxBodyBytes = integerOption(options.maxBodyBytes, '--max-body-bytes', 256, 16 * 1024 * 1024);
      const limits = {
        ...(options.maxConnections === undefined ? {} : { maxConnections: integerOption(options.maxConnections, '--max-connections', 1, 1_000_000) }),
        ...(options.maxConnectionsPerAddress === undefined
          ? {}
          : { maxConnectionsPerAddress: integerOption(options.maxConnectionsPerAddress, '--max-connections-per-address', 1, 1_000_000) }),
        idleTimeoutMs: integerOption(options.idleTimeout, '--idle-timeout', 1, 86_400) * 1000,
      };
      const paths = options.dataset ?? bundledDatasets();
      if (paths.length === 0) {
        throw new CrosstabError(ErrorCode.fileNotFound, 'No dataset to serve: datasets/build/ has no .arrow files.', {
          hint: `Pass --dataset <file.arrow> (from \`crosstab build\`). ${bundledDatasetsHint()}`,
        });
      }
      const datasets: Dataset[] = [];
      try {
        for (const path of paths) datasets.push(await openDataset(path));
        const developmentKeys = options.keys === undefined ? new DevelopmentKeyStore() : undefined;
        const keysPath = options.keys ?? DEV_KEYS;
        const log = (entry: AccessLogEntry | { event: string; message: string }): void => {
          const line = 'event' in entry && !('time' in entry) ? { time: new Date().toISOString(), ...entry } : entry;
          if (options.accessLog || 'event' in entry || entry.status >= 500) process.stderr.write(`${JSON.stringify(line)}\n`);
        };
        // Opened here so that SIGHUP (after rotating the file) can reopen it.
        const ledger = await NdjsonLedger.open(options.ledger, { onEvent: (event, message) => log({ event, message }) });
        const handler = await createCrosstabHandler({
          datasets,
          keys: developmentKeys ?? keysPath,
          usage: ledger,
          basePath: options.basePath,
          corsOrigins: options.corsOrigin ?? '*',
          maxBodyBytes,
          ...(options.publicUrl === undefined ? {} : { serverUrl: options.publicUrl }),
          log,
        });
        const server = await listen(handler, { port, host: options.host, ...limits }).catch(async (error: NodeJS.ErrnoException) => {
          await handler.close();
          if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
            throw new CrosstabError(ErrorCode.invalidOption, `Cannot listen on ${options.host}:${port} (${error.code}).`, {
              field: '--port',
              hint: 'Choose another --port, or stop the process using it.',
            });
          }
          throw error;
        });
        // Written only now that the port is ours (a failed second start must not replace it).
        const development = developmentKeys === undefined ? undefined : await createDevelopmentKey();
        if (developmentKeys) {
          const onReloadError = (error: unknown): void => log({ event: 'key_file_error', message: `${(error as Error).message}; the previous keys stay in force` });
          developmentKeys.use(await FileKeyStore.open(keysPath, { onReloadError }));
        }

        const surveys = datasets.map((dataset) => dataset.info.survey).join(', ');
        const out = process.stdout;
        out.write(`crosstab serve: ${surveys} listening on ${server.url}\n`);
        out.write(`  docs:   ${server.url}/docs\n  keys:   ${resolve(keysPath)}\n  ledger: ${resolve(options.ledger)}\n`);
        if (development) {
          const first = datasets[0] as Dataset;
          const body = JSON.stringify({ SurveyCode: first.info.survey, PopulationBaseCode: '*', TargetCodes: exampleTargets(first) });
          out.write(`\nDevelopment API key (valid 24 h, shown once, new on every start):\n  ${development.apiKey}\n`);
          out.write(`\nTry:\n  curl -s ${server.url}/crosstab -H 'Content-Type: application/json' -H 'Service-Engine-Authorizer: ${development.apiKey}' -d '${body}'\n`);
        }

        await new Promise<void>((resolveStop) => {
          const reopen = (): void => ledger.reopen();
          const stop = (signal: NodeJS.Signals): void => {
            process.off('SIGTERM', stop);
            process.off('SIGINT', stop);
            process.off('SIGHUP', reopen);
            process.once(signal, () => process.exit(130));
            process.stderr.write(`crosstab serve: ${signal}, draining in-flight requests\n`);
            void server.close().then(resolveStop);
          };
          process.on('SIGTERM', stop);
          process.on('SIGINT', stop);
          process.on('SIGHUP', reopen);
        });
        process.stderr.write('crosstab serve: stopped\n');
      } finally {
        for (const dataset of datasets) dataset.close();
      }
    });
}

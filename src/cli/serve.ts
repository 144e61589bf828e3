import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { CrosstabError, DEFAULT_CELL_CACHE, ErrorCode, openDataset, type Dataset } from '../index.js';
import { checkServerUrl, createCrosstabHandler, datasetVersion, DEFAULT_TABLE_LIMITS, listen, listenMetrics, NdjsonLedger, proxyTrust, ServiceMetrics, type RunningMetricsServer, type TrustedProxies } from '../http/index.js';
import { bundledDatasets, bundledDatasetsHint } from './bundled.js';
import { databaseOption } from './database-option.js';
import { DEFAULT_USAGE_STATEMENTS, openAccessStore, seedDevelopment, type AccessStore } from './serve-access.js';
import { createPortal, mountPortal } from '../portal/index.js';
import { valueExpression } from '../text/expression-text.js';
import { DbAudienceStore, DEFAULT_JWKS_MAX_AGE_MS, DEFAULT_MAX_TOKEN_LIFETIME_SECONDS, type OidcOptions } from '../access/index.js';
import type { DurableWriteStats } from '../keys/index.js';
import { checkLogLevel, createServeLog } from './serve-log.js';
import { storeProbe } from './serve-readiness.js';
import { DatasetReloader, fileIdentity } from './serve-reload.js';
import { checkPortFree, portRefusal } from './serve-port.js';
import { isClickHouseUrl } from '../clickhouse/url.js';

interface ServeOptions {
  dataset?: string[];
  keys?: string;
  port: string;
  host: string;
  basePath: string;
  corsOrigin?: string[];
  ledger: string;
  maxBodyBytes: string;
  bodyTimeout: string;
  publicUrl?: string;
  accessLog?: boolean;
  maxConnections?: string;
  maxConnectionsPerAddress?: string;
  idleTimeout: string;
  shutdownTimeout: string;
  database?: string;
  oidcIssuer?: string[];
  oidcAudience?: string;
  oidcMaxTokenLifetime?: string;
  oidcJwksMaxAge?: string;
  trustProxy?: boolean | string;
  cellCache?: string;
  usageStatements?: string;
  devAccount?: boolean;
  watch?: boolean;
  maxTableCells?: string;
  maxTableComparisons?: string;
  maxTableCovariance?: string;
  maxTableAnswerBytes?: string;
  tableThreads?: string;
  tablesPerAccount?: string;
  maxTableBytesInFlight?: string;
  metricsPort?: string;
  metricsHost: string;
  logLevel: string;
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

function oidcOptions(options: ServeOptions): OidcOptions | undefined {
  if (options.oidcIssuer === undefined && options.oidcAudience === undefined) {
    const stray = options.oidcMaxTokenLifetime !== undefined ? '--oidc-max-token-lifetime' : options.oidcJwksMaxAge !== undefined ? '--oidc-jwks-max-age' : undefined;
    if (stray !== undefined) throw new CrosstabError(ErrorCode.invalidOption, `${stray} applies to single sign-on: it needs --oidc-issuer and --oidc-audience.`, { field: stray });
    return undefined;
  }
  if (options.oidcIssuer === undefined || options.oidcAudience === undefined) {
    throw new CrosstabError(ErrorCode.invalidOption, '--oidc-issuer and --oidc-audience go together.', { field: options.oidcIssuer === undefined ? '--oidc-issuer' : '--oidc-audience', hint: 'Give the issuer URL(s) to trust and the audience its tokens carry for this API.' });
  }
  if (options.keys !== undefined) throw new CrosstabError(ErrorCode.invalidOption, '--oidc-issuer needs the accounts database: it cannot be combined with --keys.', { field: '--oidc-issuer' });
  for (const issuer of options.oidcIssuer) {
    if (!URL.canParse(issuer)) throw new CrosstabError(ErrorCode.invalidOption, `--oidc-issuer must be a URL; got ${JSON.stringify(issuer)}.`, { field: '--oidc-issuer' });
  }
  return {
    issuers: options.oidcIssuer.map((issuer) => ({ issuer, audience: options.oidcAudience as string })),
    ...(options.oidcMaxTokenLifetime === undefined ? {} : { maxTokenLifetimeSeconds: integerOption(options.oidcMaxTokenLifetime, '--oidc-max-token-lifetime', 1, 366 * 86_400) }),
    ...(options.oidcJwksMaxAge === undefined ? {} : { jwksMaxAgeMs: integerOption(options.oidcJwksMaxAge, '--oidc-jwks-max-age', 1, 86_400) * 1000 }),
  };
}

/** `--trust-proxy` alone trusts any peer; with a value, only the listed addresses and ranges (checked here). */
function trustedProxies(value: boolean | string | undefined): TrustedProxies {
  if (value === undefined || value === false) return false;
  if (value === true) return true;
  const list = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (list.length === 0) throw new CrosstabError(ErrorCode.invalidOption, '--trust-proxy needs the proxy addresses, e.g. --trust-proxy 10.0.0.7 or 172.28.0.0/24.', { field: '--trust-proxy' });
  proxyTrust(list, '--trust-proxy');
  return list;
}

function exampleTargets(dataset: Dataset): string[] {
  const code = dataset.info.codes[0];
  if (code) return [code.name];
  const variable = dataset.info.variables.find((v) => v.values && v.values.length > 0);
  return variable?.values?.[0] ? [valueExpression(variable.name, variable.values[0].value)] : ['*'];
}

/** `crosstab serve`: the REST API over node:http, with graceful shutdown on SIGTERM/SIGINT. */
export function registerServeCommand(program: Command): void {
  databaseOption(program.command('serve'))
    .description('serve the REST API: GET <base>/docs, POST <base>/crosstab, GET <base>/surveys[/{SurveyCode}], POST <base>/tables')
    .option('--dataset <file>', 'compiled dataset (or clickhouse://host:port/db?table=NAME from `crosstab push`) to serve, repeatable (default: the bundled datasets/build/*.arrow)', collect)
    .option('--keys <file>', 'API key file from `crosstab keys add --keys` (file mode; default: the accounts and keys of --database)')
    .option('--port <n>', 'TCP port (0 = any free port)', '8080')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--base-path <path>', 'mount path, with a v1 segment', '/v1')
    .option('--cors-origin <origin>', 'allowed browser origin, repeatable (default: any origin)', collect)
    .option('--ledger <file>', 'file mode: usage ledger (NDJSON, one fsync\'d line per billed request)', join(DEV_FOLDER, 'usage.ndjson'))
    .option('--max-body-bytes <n>', 'largest accepted request body', '16384')
    .option('--body-timeout <ms>', 'a request body the answer needs must arrive within this many ms of its headers, else 408 (at most 30000)', '10000')
    .option('--public-url <url>', 'the absolute URL clients reach the API at, with its base path (https://api.example/v1): servers[0].url of GET /docs, which validating proxies and generated clients route by (default: the base path alone, a relative URL)')
    .option('--oidc-issuer <url>', 'single sign-on: trust JWT access tokens of this OpenID Connect issuer, repeatable (needs --oidc-audience)', collect)
    .option('--oidc-audience <aud>', 'single sign-on: the "aud" the access tokens must carry (this API\'s identifier)')
    .option('--oidc-max-token-lifetime <seconds>', `single sign-on: refuse access tokens living longer than this ("exp" - "iat"; default ${DEFAULT_MAX_TOKEN_LIFETIME_SECONDS})`)
    .option('--oidc-jwks-max-age <seconds>', `single sign-on: download each issuer's signing keys again at least this often, so a key removed there stops verifying within it (default ${DEFAULT_JWKS_MAX_AGE_MS / 1000})`)
    .option('--access-log', 'log every request at level info (without it, at debug); the log is one JSON object per line on stderr, never an API key')
    .option('--log-level <level>', 'least level logged: fatal, error, warn, info, debug, trace or silent', 'info')
    .option('--metrics-port <n>', 'serve GET /metrics (Prometheus), /healthz and /readyz on this port, apart from the API (no authentication: never expose it publicly; 0 = any free port)')
    .option('--metrics-host <host>', 'interface of the metrics port', '127.0.0.1')
    .option('--max-connections <n>', 'most open connections; more are closed on arrival (default: ulimit -n minus the descriptors open at start minus 128, at least 16, at most 4096)')
    .option('--max-connections-per-address <n>', 'most open connections from one IP address (default 64)')
    .option('--idle-timeout <seconds>', 'close a connection idle this long', '30')
    .option('--shutdown-timeout <ms>', 'on SIGTERM or SIGINT, the one deadline of the drain: requests in flight and table answers being sent are delivered whole until then; answers still being sent then are cut (counted in the handler_closed event) and open connections closed', '10000')
    .option('--cell-cache <cells>', `crosstab cells per dataset kept in memory to answer repeated queries without the kernel (exact: a dataset file never changes; 0 = off; default ${DEFAULT_CELL_CACHE} for a file, 0 for ClickHouse)`)
    .option('--usage-statements <n>', `PostgreSQL server: usage INSERT statements in flight at once (each carries every billed call that arrived while the one before committed; default ${DEFAULT_USAGE_STATEMENTS})`)
    .option('--dev-account', 'on an empty PostgreSQL server database too, create the development account (every served survey and group) and print its one-time password and a 24 h key; the embedded database always gets it')
    .option('--watch', 'reload a --dataset file when it is replaced (as SIGHUP does): the new build is opened and verified, then serves new requests while those running finish on the old one')
    .option('--max-table-cells <n>', `POST /tables: most cells of one table, rows x columns after whole variables are expanded (default ${DEFAULT_TABLE_LIMITS.cells})`)
    .option('--max-table-comparisons <n>', `POST /tables: most column comparisons of "sig", rows x pairs of columns within each column variable (default ${DEFAULT_TABLE_LIMITS.comparisons})`)
    .option('--max-table-covariance <n>', `POST /tables: most covariance entries of the "chisq" Rao-Scott tests, each test's cells squared, summed (default ${DEFAULT_TABLE_LIMITS.raoScottCovariance})`)
    .option('--max-table-answer-bytes <n>', `POST /tables: most bytes of one answer, JSON, CSV or XLSX (default ${DEFAULT_TABLE_LIMITS.answerBytes})`)
    .option('--table-threads <n>', 'POST /tables: worker threads that compute statistics and write answers (default: half the cores, at least 1)')
    .option('--max-table-bytes-in-flight <n>', 'POST /tables: most bytes of table answers held at once across all requests (a streamed JSON or CSV answer 1.25 MiB, a workbook its size); past it, 503 with Retry-After, unbilled (default 512 MiB, at least --max-table-answer-bytes)')
    .option('--tables-per-account <n>', 'POST /tables: tables of one account in work at once; its others wait their turn, at most 8 (default 1)')
    .option('--trust-proxy [addresses]', 'the proxies in front (comma-separated addresses or CIDR ranges; alone: any peer): from them, X-Forwarded-For gives the client address that failed sign-ins and failed API keys are counted by, and X-Forwarded-Proto the scheme')
    .action(async (options: ServeOptions) => {
      const port = integerOption(options.port, '--port', 0, 65535);
      const metricsPort = options.metricsPort === undefined ? undefined : integerOption(options.metricsPort, '--metrics-port', 0, 65535);
      const logLevel = checkLogLevel(options.logLevel);
      const maxBodyBytes = integerOption(options.maxBodyBytes, '--max-body-bytes', 256, 16 * 1024 * 1024);
      // The server's own limit on a whole request is 30 s: a longer body timeout would never fire.
      const bodyTimeoutMs = integerOption(options.bodyTimeout, '--body-timeout', 1, 30_000);
      const shutdownTimeoutMs = integerOption(options.shutdownTimeout, '--shutdown-timeout', 0, 2_147_483_647);
      const limits = {
        ...(options.maxConnections === undefined ? {} : { maxConnections: integerOption(options.maxConnections, '--max-connections', 1, 1_000_000) }),
        ...(options.maxConnectionsPerAddress === undefined
          ? {}
          : { maxConnectionsPerAddress: integerOption(options.maxConnectionsPerAddress, '--max-connections-per-address', 1, 1_000_000) }),
        idleTimeoutMs: integerOption(options.idleTimeout, '--idle-timeout', 1, 86_400) * 1000,
      };
      const tableLimits = {
        ...(options.maxTableCells === undefined ? {} : { cells: integerOption(options.maxTableCells, '--max-table-cells', 1, 25_000_000) }),
        ...(options.maxTableComparisons === undefined ? {} : { comparisons: integerOption(options.maxTableComparisons, '--max-table-comparisons', 1, 100_000_000) }),
        ...(options.maxTableCovariance === undefined ? {} : { raoScottCovariance: integerOption(options.maxTableCovariance, '--max-table-covariance', 1, 1_000_000_000) }),
        ...(options.maxTableAnswerBytes === undefined ? {} : { answerBytes: integerOption(options.maxTableAnswerBytes, '--max-table-answer-bytes', 1024, 2 ** 31 - 1) }),
      };
      const tableThreads = options.tableThreads === undefined ? undefined : integerOption(options.tableThreads, '--table-threads', 1, 256);
      const tablesPerAccount = options.tablesPerAccount === undefined ? undefined : integerOption(options.tablesPerAccount, '--tables-per-account', 1, 1024);
      const maxTableBytesInFlight = options.maxTableBytesInFlight === undefined ? undefined : integerOption(options.maxTableBytesInFlight, '--max-table-bytes-in-flight', 1024, Number.MAX_SAFE_INTEGER);
      const cellCache = options.cellCache === undefined ? undefined : integerOption(options.cellCache, '--cell-cache', 0, 100_000_000);
      const oidc = oidcOptions(options);
      const trustProxy = trustedProxies(options.trustProxy);
      const publicUrl = options.publicUrl === undefined ? undefined : checkServerUrl(options.publicUrl, '--public-url');
      const usageStatements = options.usageStatements === undefined ? undefined : integerOption(options.usageStatements, '--usage-statements', 1, 8);
      if (usageStatements !== undefined && options.keys !== undefined) {
        throw new CrosstabError(ErrorCode.invalidOption, '--usage-statements applies to the accounts database; it cannot be combined with --keys.', {
          field: '--usage-statements',
          hint: 'With --keys the usage ledger is a file (--ledger), which overlaps its own flushes: leave --usage-statements out.',
        });
      }
      if (options.devAccount && options.keys !== undefined) {
        throw new CrosstabError(ErrorCode.invalidOption, '--dev-account needs the accounts database; it cannot be combined with --keys.', { field: '--dev-account', hint: 'With --keys, add a key with `crosstab keys add --keys FILE`.' });
      }
      const paths = options.dataset ?? bundledDatasets();
      if (paths.length === 0) {
        throw new CrosstabError(ErrorCode.fileNotFound, 'No dataset to serve: datasets/build/ has no .arrow files.', {
          hint: `Pass --dataset <file.arrow> (from \`crosstab build\`). ${bundledDatasetsHint()}`,
        });
      }
      const datasets: Dataset[] = [];
      let access: AccessStore | undefined;
      const versions = new Map<string, string>();
      const serveLog = createServeLog({ level: logLevel, accessLog: options.accessLog === true, versionOf: (survey) => versions.get(survey) });
      const metrics = metricsPort === undefined ? undefined : new ServiceMetrics({ datasets: () => datasets });
      const readiness = { datasets: 'opening', draining: false, store: undefined as (() => Promise<string | undefined>) | undefined };
      let metricsServer: RunningMetricsServer | undefined;
      let storeDown = false;
      let reloader: DatasetReloader | undefined;
      let reopen: (() => void) | undefined;
      try {
        // The metrics port first: /healthz answers and /readyz says why not ready while the datasets open.
        if (metrics !== undefined) {
          metricsServer = await listenMetrics({
            port: metricsPort as number,
            host: options.metricsHost,
            metrics,
            readiness: {
              datasets: () => (readiness.datasets === 'ok' ? undefined : readiness.datasets),
              store: () => (readiness.store === undefined ? 'opening' : readiness.store()),
              draining: () => (readiness.draining ? 'the server is shutting down' : undefined),
            },
          }).catch((error: NodeJS.ErrnoException) => {
            throw portRefusal(error, options.metricsHost, metricsPort as number, '--metrics-port');
          });
        }
        // A busy --port is refused now, not after the datasets and the database have been opened.
        await checkPortFree(options.host, port, '--port');
        // Each file's identity is taken before it is opened: a file replaced meanwhile is reloaded by the next SIGHUP.
        const identities = await Promise.all(paths.map((path) => (isClickHouseUrl(path) ? undefined : fileIdentity(path))));
        for (const path of paths) datasets.push(await openDataset(path, cellCache === undefined ? {} : { cellCache }));
        for (const dataset of datasets) versions.set(dataset.info.survey, datasetVersion(dataset.info.checksum));
        // Every buffer is read and checked against its checksum before the service answers, as a
        // reload reads a new version: answers never read the file again, so a file rewritten in
        // place under the service (copied over instead of renamed) cannot reach them, and the
        // reload takes it up. Ready means every buffer checked.
        readiness.datasets = 'verifying';
        for (const [index, dataset] of datasets.entries()) if (!isClickHouseUrl(paths[index] as string)) dataset.verify();
        readiness.datasets = 'ok';
        // A 503 is logged through the event that made the service unavailable (store_down,
        // the shutdown), once, not per request.
        const onEvent = (event: string, message: string, stats?: DurableWriteStats): void => {
          if (event === 'store_down' || event === 'store_up') {
            storeDown = event === 'store_down';
            metrics?.storeState(!storeDown);
          }
          serveLog.event(event, message, stats === undefined ? undefined : { stats });
        };
        const log = (entry: Parameters<NonNullable<Parameters<typeof createCrosstabHandler>[0]['log']>>[0]): void => {
          if ('event' in entry) serveLog.event(entry.event, entry.message);
          else serveLog.request(entry);
        };
        access =
          options.keys === undefined
            ? await openAccessStore(options.database, {
                ...(oidc === undefined ? {} : { oidc }),
                ...(usageStatements === undefined ? {} : { usageStatements }),
                onEvent,
                ...(metrics === undefined ? {} : { onOperation: metrics.storeOperation }),
              })
            : undefined;
        // File mode: the ledger is opened here so that SIGHUP (after rotating the file) can reopen it.
        const ledger = access ? undefined : await NdjsonLedger.open(options.ledger, { onEvent });
        const db = access?.db;
        const probe = db === undefined ? async () => undefined : storeProbe(db);
        // Ready again only once the store counts as back (answering for a while, store_up), not at its first answer.
        readiness.store = async () => (await probe()) ?? (storeDown ? 'the access database went down and has not answered steadily since' : undefined);
        const handler = await createCrosstabHandler({
          datasets,
          keys: access?.keys ?? (options.keys as string),
          usage: access?.usage ?? (ledger as NdjsonLedger),
          basePath: options.basePath,
          corsOrigins: options.corsOrigin ?? '*',
          maxBodyBytes,
          bodyTimeoutMs,
          ...(publicUrl === undefined ? {} : { serverUrl: publicUrl }),
          trustProxy,
          tableLimits,
          ...(tableThreads === undefined ? {} : { tableWorkers: { threads: tableThreads } }),
          ...(tablesPerAccount === undefined ? {} : { tableShare: { running: tablesPerAccount } }),
          ...(maxTableBytesInFlight === undefined ? {} : { maxTableBytesInFlight }),
          log,
          ...(metrics === undefined ? {} : { metrics }),
          ...(access ? { audiences: new DbAudienceStore(access.db) } : {}),
        });
        reloader = new DatasetReloader({
          handler,
          datasets,
          paths,
          identities,
          open: (path) => openDataset(path, { verify: 'full', ...(cellCache === undefined ? {} : { cellCache }) }),
          onEvent: ({ event, message, ...details }) => {
            // The version logged with each request and shown in the metrics follows the build serving.
            for (const dataset of datasets) versions.set(dataset.info.survey, datasetVersion(dataset.info.checksum));
            serveLog.event(event, message, details);
          },
        });
        if (options.watch) reloader.watch();
        // SIGHUP: reopen the ledger (after a rotation) and reload every dataset file replaced since
        // it was opened. Listened for before the port is announced: without a listener, a SIGHUP
        // (a log rotation, a publish) that arrives during the start would end the process.
        reopen = (): void => {
          ledger?.reopen();
          void reloader?.reloadChanged('SIGHUP');
        };
        process.on('SIGHUP', reopen);
        const first = datasets[0] as Dataset;
        const exampleBody = JSON.stringify({ SurveyCode: first.info.survey, PopulationBaseCode: '*', TargetCodes: exampleTargets(first) });
        let apiUrl = publicUrl ?? '';
        const served = access ? mountPortal(handler, createPortal({ db: access.db, keys: access.keys, apiUrl: () => apiUrl, exampleBody, trustProxy, surveys: datasets, ...(publicUrl?.startsWith('https:') ? { secureCookies: true } : {}) })) : handler;
        const server = await listen(served, { port, host: options.host, ...limits, ...(metrics === undefined ? {} : { metrics }) }).catch(async (error: NodeJS.ErrnoException) => {
          await handler.close();
          throw portRefusal(error, options.host, port, '--port');
        });

        // Seeded only now that the port is ours: a failed start leaves an empty database.
        const firstStart = access ? await seedDevelopment(access, datasets.map((dataset) => dataset.info.survey), options.devAccount === true) : undefined;
        const development = firstStart?.seeded;
        if (apiUrl === '') apiUrl = server.url;
        const surveys = datasets.map((dataset) => dataset.info.survey).join(', ');
        const out = process.stdout;
        out.write(`crosstab serve: ${surveys} listening on ${server.url}\n`);
        out.write(`  docs:   ${server.url}/docs\n`);
        if (access) out.write(`  portal: ${server.url.slice(0, server.url.length - handler.basePath.length)}/portal\n`);
        if (metricsServer) out.write(`  metrics: ${metricsServer.url}/metrics  (health: /healthz, readiness: /readyz)\n`);
        if (access) out.write(`  access: ${access.db.kind} database ${access.db.kind === 'embedded' ? resolve(access.db.location) : access.db.location}\n`);
        else out.write(`  keys:   ${resolve(options.keys as string)}\n  ledger: ${resolve(options.ledger)}\n`);
        if (development) {
          const body = exampleBody;
          out.write(`\nNew database: created the account "development" (every served survey and group) and its portal user\n  ${development.email}  one-time password: ${development.oneTimePassword}\n`);
          out.write(`\nDevelopment API key (valid 24 h, shown once):\n  ${development.apiKey}\n`);
          out.write(`\nTry:\n  curl -s ${server.url}/crosstab -H 'Content-Type: application/json' -H 'Service-Engine-Authorizer: ${development.apiKey}' -d '${body}'\n`);
        } else if (firstStart !== undefined && 'emptyServer' in firstStart && firstStart.emptyServer) {
          out.write('\nThe database has no account yet: add one with `crosstab accounts add` (no development account is created on a PostgreSQL server without --dev-account).\n');
        }

        serveLog.event('started', `Serving ${surveys} on ${server.url}.`, {
          url: server.url,
          ...(metricsServer === undefined ? {} : { metricsUrl: metricsServer.url }),
          datasets: datasets.map((dataset) => ({ survey: dataset.info.survey, version: versions.get(dataset.info.survey), createdAt: dataset.info.createdAt, respondents: dataset.info.respondents })),
        });
        await new Promise<void>((resolveStop) => {
          const stop = (signal: NodeJS.Signals): void => {
            process.off('SIGTERM', stop);
            process.off('SIGINT', stop);
            if (reopen !== undefined) process.off('SIGHUP', reopen);
            process.once(signal, () => process.exit(130));
            readiness.draining = true;
            serveLog.event('shutdown', `${signal}, draining in-flight requests (at most ${shutdownTimeoutMs} ms, --shutdown-timeout).`, { signal, shutdownTimeoutMs });
            void server.close(shutdownTimeoutMs).then(resolveStop);
          };
          process.on('SIGTERM', stop);
          process.on('SIGINT', stop);
        });
        serveLog.event('stopped', 'Stopped.');
      } finally {
        if (reopen !== undefined) process.off('SIGHUP', reopen);
        await reloader?.close();
        await metricsServer?.close();
        await access?.db.close();
        await Promise.all(datasets.map((dataset) => dataset.close()));
      }
    });
}

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { descriptorLimit, openDescriptors } from './connection-limits.js';
import { engineStats, type Dataset, type EngineStats } from '../index.js';
import type { DurableWriteListener } from '../keys/index.js';
import type { AccessLogEntry } from './handler-types.js';

/** Seconds: from a cached answer (tens of µs) to a large table (seconds). */
const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds of a durable write (an fdatasync, a commit) or a store operation. */
const WRITE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/** The refusals of account limits and of failed keys, by the error code the client gets. */
const ACCOUNT_REFUSALS = new Set(['rate_limited', 'quota_exceeded']);

interface OperationChildren {
  duration: Histogram.Internal<'operation'>;
  /** status → error code ('' for none) → the pre-bound counter. */
  byStatus: Map<number, Map<string, Counter.Internal>>;
}

/** What a handler hands to its metrics: its own counts and its failed-key limiter's. */
export interface HandlerCounts {
  stats: { readonly bodyTimeouts: number; readonly unreadBodies: number };
  authFailures: { readonly failures: number; readonly addresses: number };
}

export interface ServiceMetricsOptions {
  /** The registry to register in (an embedding service's own); default a new one. */
  registry?: Registry;
  /** The open datasets, read at each scrape (engineStats()). Default none. */
  datasets?: () => readonly Dataset[];
  /**
   * Also register the standard process metrics (process_cpu_seconds_total,
   * process_start_time_seconds, process_open_fds, process_max_fds). Default true; leave it
   * false in a registry that has prom-client's collectDefaultMetrics() already.
   */
  processMetrics?: boolean;
}

/**
 * The service's Prometheus metrics (prom-client): requests by operation, status and error
 * code, latency per operation, billed calls, usage writes, refusals, connections, the store,
 * readiness, and the engine's figures (engineStats()) read at each scrape. The request path
 * only increments pre-bound children, made once per label set and kept.
 */
export class ServiceMetrics {
  readonly registry: Registry;
  private readonly datasets: () => readonly Dataset[];
  private readonly requests: Counter<'operation' | 'status' | 'code'>;
  private readonly duration: Histogram<'operation'>;
  private readonly billed: Counter<'operation' | 'survey'>;
  private readonly operations = new Map<string, OperationChildren>();
  private readonly billedChildren = new Map<string, Counter.Internal>();
  private readonly voided: Counter<'operation' | 'survey' | 'reason'>;
  private readonly accountRefusals: Counter<'reason'>;
  private readonly usageWriteSeconds: Histogram;
  private readonly usageWriteRecords: Histogram;
  private readonly storeSeconds: Histogram<'outcome'>;
  private readonly storeUp: Gauge;
  private readonly connectionRefusals: Counter<'reason'>;
  private openConnections = 0;
  private handlers: HandlerCounts[] = [];
  private snapshot: { at: number; stats: EngineStats } | undefined;
  /** Readiness as the metrics server last decided it (crosstab_ready). */
  ready = false;
  draining = false;

  constructor(options: ServiceMetricsOptions = {}) {
    const registry = (this.registry = options.registry ?? new Registry());
    this.datasets = options.datasets ?? (() => []);
    const registers = [registry];
    if (options.processMetrics !== false) processMetrics(registers);
    this.requests = new Counter({ name: 'crosstab_http_requests_total', help: 'API requests answered, by operation (operationId; none: no operation at that path), HTTP status and error code (empty for a success).', labelNames: ['operation', 'status', 'code'], registers });
    this.duration = new Histogram({ name: 'crosstab_http_request_duration_seconds', help: 'Time from the request headers to the answer, by operation.', labelNames: ['operation'], buckets: LATENCY_BUCKETS, registers });
    this.billed = new Counter({ name: 'crosstab_billed_calls_total', help: 'Billed answers (each one usage record made durable before its 200), by operation and survey.', labelNames: ['operation', 'survey'], registers });
    this.voided = new Counter({ name: 'crosstab_voided_calls_total', help: 'Billed answers then not delivered, whose void (credit) record is durable, by operation, survey and reason (client_closed, send_failed, shutdown_cut): billed calls minus these are the calls billed in the end.', labelNames: ['operation', 'survey', 'reason'], registers });
    this.accountRefusals = new Counter({ name: 'crosstab_account_refusals_total', help: 'Requests refused by the account limits (429): rate_limited or quota_exceeded.', labelNames: ['reason'], registers });
    this.usageWriteSeconds = new Histogram({ name: 'crosstab_usage_write_duration_seconds', help: 'Wall time of each durable usage write (ledger fdatasync, database commit).', buckets: WRITE_BUCKETS, registers });
    this.usageWriteRecords = new Histogram({ name: 'crosstab_usage_write_batch_records', help: 'Usage records (billed calls) per durable write.', buckets: BATCH_BUCKETS, registers });
    this.storeSeconds = new Histogram({ name: 'crosstab_store_operation_duration_seconds', help: 'Time of each accounts database operation (statement, transaction, COPY), by outcome (ok, unavailable).', labelNames: ['outcome'], buckets: WRITE_BUCKETS, registers });
    this.storeUp = new Gauge({ name: 'crosstab_store_up', help: '1 while the accounts database (or the usage ledger file) answers, 0 while it is down.', registers });
    this.storeUp.set(1);
    this.connectionRefusals = new Counter({ name: 'crosstab_connection_refusals_total', help: 'Connections closed on arrival: max_connections (the process limit) or per_address (503).', labelNames: ['reason'], registers });
    for (const reason of ['max_connections', 'per_address']) this.connectionRefusals.labels(reason).inc(0);
    for (const reason of ACCOUNT_REFUSALS) this.accountRefusals.labels(reason).inc(0);
    const self = this;
    new Gauge({ name: 'crosstab_open_connections', help: 'Connections open to the API port now.', registers, collect() { this.set(self.openConnections); } });
    new Gauge({ name: 'crosstab_ready', help: '1 when /readyz last answered 200 (datasets open and verified, store answering, not draining).', registers, collect() { this.set(self.ready ? 1 : 0); } });
    new Gauge({ name: 'crosstab_draining', help: '1 once shutdown has begun (new requests are refused).', registers, collect() { this.set(self.draining ? 1 : 0); } });
    const handlerSum = (read: (counts: HandlerCounts) => number): number => this.handlers.reduce((sum, counts) => sum + read(counts), 0);
    new Counter({ name: 'crosstab_body_timeouts_total', help: 'Requests answered 408: the body did not arrive within the body timeout.', registers, collect() { this.reset(); this.inc(handlerSum((h) => h.stats.bodyTimeouts)); } });
    new Counter({ name: 'crosstab_unread_bodies_total', help: 'Requests answered from their headers without reading the body they declared (the connection then closed).', registers, collect() { this.reset(); this.inc(handlerSum((h) => h.stats.unreadBodies)); } });
    new Counter({ name: 'crosstab_failed_keys_total', help: 'Requests whose well-formed API key was unknown, revoked or expired.', registers, collect() { this.reset(); this.inc(handlerSum((h) => h.authFailures.failures)); } });
    new Gauge({ name: 'crosstab_failed_key_addresses', help: 'Client addresses with failed keys counted in the current window.', registers, collect() { this.set(handlerSum((h) => h.authFailures.addresses)); } });
    this.engineMetrics(registers);
  }

  /** Counts one answered request (the handler calls it with the access log entry). */
  request(entry: AccessLogEntry, seconds: number): void {
    const operation = entry.operation ?? 'none';
    let children = this.operations.get(operation);
    if (children === undefined) this.operations.set(operation, (children = { duration: this.duration.labels(operation), byStatus: new Map() }));
    children.duration.observe(seconds);
    let byCode = children.byStatus.get(entry.status);
    if (byCode === undefined) children.byStatus.set(entry.status, (byCode = new Map()));
    const code = entry.code ?? '';
    let counter = byCode.get(code);
    if (counter === undefined) byCode.set(code, (counter = this.requests.labels(operation, String(entry.status), code)));
    counter.inc();
    if (entry.billed) {
      const survey = entry.survey ?? '';
      const key = `${operation}\0${survey}`;
      let billed = this.billedChildren.get(key);
      if (billed === undefined) this.billedChildren.set(key, (billed = this.billed.labels(operation, survey)));
      billed.inc();
    }
    if (entry.code !== undefined && ACCOUNT_REFUSALS.has(entry.code)) this.accountRefusals.labels(entry.code).inc();
  }

  /** Counts one void record made durable (rare: not pre-bound). `operation` is the operationId, as in crosstab_billed_calls_total. */
  voidedCall(operation: string, survey: string, reason: string): void {
    this.voided.labels(operation, survey, reason).inc();
  }

  /** The listener a usage sink tells each durable write. */
  readonly usageWrite: DurableWriteListener = (records, seconds) => {
    this.usageWriteSeconds.observe(seconds);
    this.usageWriteRecords.observe(records);
  };

  /** Adds a handler's counts (body timeouts, failed keys) to the scrape. */
  watchHandler(counts: HandlerCounts): void {
    this.handlers.push(counts);
  }

  /** The accounts database went down (false) or answers again (true). */
  storeState(up: boolean): void {
    this.storeUp.set(up ? 1 : 0);
  }

  /** One accounts database operation: its seconds, and whether the store was unavailable. */
  readonly storeOperation = (seconds: number, unavailable: boolean): void => {
    this.storeSeconds.labels(unavailable ? 'unavailable' : 'ok').observe(seconds);
  };

  /** Connection counts of the API listener (server.ts). */
  readonly connections = {
    opened: (): void => void this.openConnections++,
    closed: (): void => void this.openConnections--,
    refused: (reason: 'max_connections' | 'per_address'): void => this.connectionRefusals.labels(reason).inc(),
  };

  /**
   * engineStats() once per scrape (its event-loop delay is since the previous call): taken
   * by the first engine metric a scrape collects (crosstab_dataset_info, registered first),
   * read by the others.
   */
  private engine(fresh = false): EngineStats {
    if (fresh || this.snapshot === undefined) this.snapshot = { at: performance.now(), stats: engineStats(this.datasets()) };
    return this.snapshot.stats;
  }

  private engineMetrics(registers: Registry[]): void {
    const engine = (): EngineStats => this.engine();
    const self = this;
    const perDataset = (name: string, help: string, read: (d: EngineStats['datasets'][number]) => number, type: 'counter' | 'gauge'): void => {
      if (type === 'gauge') {
        new Gauge({ name, help, labelNames: ['survey'], registers, collect() { this.reset(); for (const d of engine().datasets) this.labels(d.survey).set(read(d)); } });
      } else {
        new Counter({ name, help, labelNames: ['survey'], registers, collect() { this.reset(); for (const d of engine().datasets) this.labels(d.survey).inc(read(d)); } });
      }
    };
    new Gauge({
      name: 'crosstab_dataset_info',
      help: 'One series per open dataset, value 1: its survey, version (the first 16 hex digits of its checksum) and build time.',
      labelNames: ['survey', 'version', 'created_at'],
      registers,
      collect() {
        this.reset();
        for (const d of self.engine(true).datasets) this.labels(d.survey, datasetVersion(d.checksum), d.createdAt).set(1);
      },
    });
    perDataset('crosstab_dataset_respondents', 'Respondents (rows) of each open dataset.', (d) => d.respondents, 'gauge');
    perDataset('crosstab_dataset_build_timestamp_seconds', 'When each open dataset file was built (Unix seconds).', (d) => Date.parse(d.createdAt) / 1000 || 0, 'gauge');
    perDataset('crosstab_cell_cache_hits_total', 'crosstab() calls answered wholly from the cell cache.', (d) => d.cacheHits, 'counter');
    perDataset('crosstab_cell_cache_misses_total', 'crosstab() calls that asked the engine (cache on).', (d) => d.cacheMisses, 'counter');
    perDataset('crosstab_cell_cache_cells', 'Cells held in the cell cache.', (d) => d.cachedCells, 'gauge');
    const pool = (read: (p: NonNullable<EngineStats['pool']>) => number) => () => {
      const stats = engine().pool;
      return stats === undefined ? 0 : read(stats);
    };
    const gauge = (name: string, help: string, value: () => number): void => void new Gauge({ name, help, registers, collect() { this.set(value()); } });
    const counter = (name: string, help: string, value: () => number): void =>
      void new Counter({ name, help, registers, collect() { this.reset(); this.inc(value()); } });
    gauge('crosstab_pool_threads', 'Worker threads of the kernel pool (0 until a query needs it).', pool((p) => p.threads));
    gauge('crosstab_pool_queue_depth', 'Pool tasks waiting for a free thread.', pool((p) => p.queued));
    gauge('crosstab_pool_pending_tasks', 'Pool tasks submitted and not settled (queued or running).', pool((p) => p.pending));
    counter('crosstab_pool_tasks_total', 'Pool tasks settled.', pool((p) => p.tasks));
    counter('crosstab_pool_failed_tasks_total', 'Pool tasks that failed or were cancelled.', pool((p) => p.failedTasks));
    counter('crosstab_pool_task_seconds_total', 'Seconds from submission to settlement, summed over settled pool tasks.', pool((p) => p.taskSeconds));
    gauge('crosstab_event_loop_delay_p50_seconds', 'Median event-loop delay since the previous scrape.', () => engine().eventLoopDelay.p50);
    gauge('crosstab_event_loop_delay_p99_seconds', '99th percentile of the event-loop delay since the previous scrape.', () => engine().eventLoopDelay.p99);
    gauge('crosstab_event_loop_delay_max_seconds', 'Longest event-loop delay since the previous scrape.', () => engine().eventLoopDelay.max);
    new Gauge({
      name: 'crosstab_memory_bytes',
      help: 'Process memory by kind: rss, heap_used, heap_total, external, array_buffers, and the kernel\'s WebAssembly memory (kernel_reserved, kernel_allocated; within rss).',
      labelNames: ['kind'],
      registers,
      collect() {
        const m = engine().memory;
        this.labels('rss').set(m.rss);
        this.labels('heap_used').set(m.heapUsed);
        this.labels('heap_total').set(m.heapTotal);
        this.labels('external').set(m.external);
        this.labels('array_buffers').set(m.arrayBuffers);
        this.labels('kernel_reserved').set(m.kernel.reservedBytes);
        this.labels('kernel_allocated').set(m.kernel.allocatedBytes);
      },
    });
  }
}

/** The version label of a dataset: the first 16 hex digits of its checksum. */
export function datasetVersion(checksum: string): string {
  return checksum.replace(/^sha256:/, '').slice(0, 16);
}

/**
 * The process metrics every Prometheus client library exports, by their standard names.
 * (prom-client's collectDefaultMetrics() also has them, but some of its Node.js gauges end in
 * _total, which `promtool check metrics` refuses.)
 */
function processMetrics(registers: Registry[]): void {
  const started = Date.now() / 1000 - process.uptime();
  new Counter({ name: 'process_cpu_seconds_total', help: 'User and system CPU time spent in seconds.', registers, collect() {
    const { user, system } = process.cpuUsage();
    this.reset();
    this.inc((user + system) / 1e6);
  } });
  new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch in seconds.', registers, collect() { this.set(Math.round(started)); } });
  new Gauge({ name: 'process_open_fds', help: 'Number of open file descriptors.', registers, collect() { this.set(openDescriptors() ?? 0); } });
  new Gauge({ name: 'process_max_fds', help: 'Maximum number of open file descriptors.', registers, collect() { this.set(descriptorLimit() ?? 0); } });
}

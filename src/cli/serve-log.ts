import { pino, type Level, type Logger } from 'pino';
import { CrosstabError, ErrorCode } from '../index.js';
import type { AccessLogEntry } from '../http/index.js';
import type { DurableWriteStats } from '../keys/index.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Events that say something is wrong; every other event is `info`. */
const WARNING_EVENTS = new Set(['store_down', 'key_file_error', 'ledger_repaired', 'ledger_reopened']);

/** `crosstab serve`'s log: one JSON object per line on stderr (pino), never an API key. */
export interface ServeLog {
  readonly logger: Logger;
  /** One answered request (the handler's access log entry). */
  request(entry: AccessLogEntry): void;
  /** An event of the service: startup, store down/up, ledger, reload, shutdown. */
  event(event: string, message?: string, fields?: { stats?: DurableWriteStats } & Record<string, unknown>): void;
}

export function checkLogLevel(value: string): Level | 'silent' {
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new CrosstabError(ErrorCode.invalidOption, `--log-level must be one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(value)}.`, { field: '--log-level' });
  }
  return value as Level | 'silent';
}

/**
 * The serve log. Requests are `info` lines with `--access-log`, else `debug` (shown by
 * `--log-level debug`); a 5xx other than a 503 is `warn`, an internal error (with its stack)
 * `error`. A 503 for want of the store is said once by its `store_down` event, not per request.
 * `versionOf` names the dataset version a request's survey was answered from.
 */
export function createServeLog(options: { level: Level | 'silent'; accessLog: boolean; versionOf: (survey: string) => string | undefined }): ServeLog {
  const logger = pino(
    {
      level: options.level,
      messageKey: 'message',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // Synchronous writes: an event just before exit (a failed start, the last shutdown line) is never lost.
    pino.destination({ fd: 2, sync: true }),
  );
  const requestLevel: Level = options.accessLog ? 'info' : 'debug';
  return {
    logger,
    request(entry) {
      const level: Level = entry.error !== undefined ? 'error' : entry.status >= 500 && entry.code !== 'unavailable' ? 'warn' : requestLevel;
      if (!logger.isLevelEnabled(level)) return;
      const { time: _time, ...fields } = entry;
      const version = entry.survey === undefined ? undefined : options.versionOf(entry.survey);
      logger[level](version === undefined ? fields : { ...fields, datasetVersion: version });
    },
    event(event, message, fields) {
      logger[WARNING_EVENTS.has(event) ? 'warn' : 'info']({ event, ...fields }, message);
    },
  };
}

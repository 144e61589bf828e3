// Types of bench/lib/nginx.js for the TypeScript tests.
import type { ChildProcess } from 'node:child_process';

export interface NginxAccessLogLine {
  time: string;
  request_id: string;
  replica_request_id: string;
  method: string;
  uri: string;
  status: number;
  upstream: string;
  upstream_status: string;
  request_time: number;
  upstream_time: string;
}

export interface RunningNginx {
  child: ChildProcess;
  conf: string;
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  exited: Promise<number | string | null>;
  output(): string;
  errorLog(): string;
  accessLog(): NginxAccessLogLine[];
  stop(): Promise<void>;
}

export const nginxTemplate: string;
export function findNginx(): string | undefined;
export { freePort, freePorts } from './free-port.js';
export function renderNginxConf(template: string, options: { listen: string; replicas: readonly string[]; dir: string }): string;
export function startNginx(options: { dir: string; replicas: readonly string[]; binary?: string; port?: number }): Promise<RunningNginx>;

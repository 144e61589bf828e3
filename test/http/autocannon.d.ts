// The part of autocannon's API the load tests use (the package ships no types).
declare module 'autocannon' {
  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
  }
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
    total: number;
  }
  interface AutocannonResult {
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    resets: number;
    duration: number;
    latency: Histogram;
    requests: Histogram;
    throughput: Histogram;
  }
  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    requests?: AutocannonRequest[];
    method?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  /** A running load: awaitable, and an event emitter ('reqError': a connection error or timeout). */
  interface AutocannonInstance extends Promise<AutocannonResult> {
    on(event: 'reqError', listener: (error: Error) => void): this;
    /** Ends the run at its next one-second tick; the result then comes as at the end of its duration. */
    stop(): void;
  }
  function autocannon(options: AutocannonOptions): AutocannonInstance;
  export default autocannon;
}

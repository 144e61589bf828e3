/**
 * Publishing a new build of a served dataset without a restart: `crosstab serve` reloads a
 * dataset file that was replaced (by an atomic rename of a new build or append), or whose
 * weights file was written, replaced or removed (`crosstab weight`), on SIGHUP, and with
 * `--watch` when the file's folder says it changed. The new file is opened and
 * every buffer checked against its checksum first; only then does the handler serve it, in
 * one step, while the requests already running finish on the old version, which is closed
 * with a drain. A file that fails to open, or holds another survey, leaves the old version
 * serving, and the event says why.
 */
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { isCrosstabError, type Dataset } from '../index.js';
import type { CrosstabHandler } from '../http/index.js';
import { weightsFilePath } from '../dataset/file/weights-file.js';

/** What a reload did, for the serve command's log (and anything else that counts them). */
export interface ReloadEvent {
  event: 'dataset_reloaded' | 'dataset_reload_failed' | 'dataset_unchanged';
  /** What started it. */
  trigger: 'SIGHUP' | 'watch';
  survey: string;
  path: string;
  message: string;
  /** The checksum served before, and (dataset_reloaded) the one served now. */
  from: string;
  to?: string;
  /** dataset_reloaded: when the version now served was built. */
  builtAt?: string;
  /** Milliseconds to open and verify the new file. */
  ms?: number;
}

export interface ReloaderOptions {
  handler: Pick<CrosstabHandler, 'replaceDataset'>;
  /** The served datasets: the reloader puts a new version in the same place (the portal reads this list). */
  datasets: Dataset[];
  /** The file each dataset was opened from (same order); a ClickHouse address is never reloaded. */
  paths: readonly string[];
  /** The file identities (fileIdentity) taken before the datasets were opened. */
  identities: ReadonlyArray<string | undefined>;
  /** Opens a new version (with the serve command's options, every buffer verified). */
  open: (path: string) => Promise<Dataset>;
  onEvent: (event: ReloadEvent) => void;
  /** How long a replaced version may take to finish its requests (close({ drain: true })'s timeoutMs). */
  drainMs?: number;
  /** Milliseconds of quiet after a change in the folder before the file is looked at (default 200). */
  settleMs?: number;
}

/**
 * Device, inode, size and modification time of the dataset file and of its weights file (or
 * its absence): a rename or a rewrite of either changes it, so a new weights file (`crosstab
 * weight`) is reloaded as a new build is. undefined: the dataset file cannot be read.
 */
export async function fileIdentity(path: string): Promise<string | undefined> {
  const identity = async (file: string) => {
    try {
      const info = await stat(file, { bigint: true });
      return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}`;
    } catch {
      return undefined;
    }
  };
  const dataset = await identity(path);
  return dataset === undefined ? undefined : `${dataset}|${(await identity(weightsFilePath(path))) ?? 'no weights file'}`;
}

export class DatasetReloader {
  private readonly identities: Array<string | undefined>;
  private readonly watchers: FSWatcher[] = [];
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly drains = new Set<Promise<void>>();
  /** One reload at a time, in order of the triggers. */
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: ReloaderOptions) {
    this.identities = [...options.identities];
  }

  /** Looks at every served file and reloads those replaced since they were opened. */
  reloadChanged(trigger: ReloadEvent['trigger']): Promise<void> {
    const indexes = this.options.paths.map((_, index) => index).filter((index) => this.identities[index] !== undefined);
    return this.enqueue(async () => {
      for (const index of indexes) await this.reloadIfChanged(index, trigger);
    });
  }

  /** Watches each served file's folder (an atomic rename is an event of the folder, not of the old file). */
  watch(): void {
    const byFolder = new Map<string, number[]>();
    this.options.paths.forEach((path, index) => {
      if (this.identities[index] === undefined) return;
      const folder = dirname(resolve(path));
      byFolder.set(folder, [...(byFolder.get(folder) ?? []), index]);
    });
    for (const [folder, indexes] of byFolder) {
      const watcher = watch(folder, { persistent: false }, (_event, name) => {
        for (const index of indexes) {
          const file = basename(this.options.paths[index] as string);
          if (name === null || name === file || name === basename(weightsFilePath(file))) this.settle(index);
        }
      });
      watcher.on('error', () => {});
      this.watchers.push(watcher);
    }
  }

  /** Stops watching and waits for a reload in progress and for the replaced versions to drain. */
  async close(): Promise<void> {
    this.stopped = true;
    for (const watcher of this.watchers) watcher.close();
    for (const timer of this.timers.values()) clearTimeout(timer);
    await this.queue;
    await Promise.all(this.drains);
  }

  /** A change in the folder: look at the file once it has been quiet for settleMs (a copy writes in many steps). */
  private settle(index: number): void {
    clearTimeout(this.timers.get(index));
    this.timers.set(
      index,
      setTimeout(() => {
        this.timers.delete(index);
        void this.enqueue(() => this.reloadIfChanged(index, 'watch', true));
      }, this.options.settleMs ?? 200),
    );
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(() => (this.stopped ? undefined : work()));
    return this.queue;
  }

  private async reloadIfChanged(index: number, trigger: ReloadEvent['trigger'], quietWhenUnchanged = false): Promise<void> {
    const { datasets, paths, open, handler, onEvent } = this.options;
    const path = paths[index] as string;
    const served = datasets[index] as Dataset;
    const base = { trigger, survey: served.info.survey, path, from: served.info.checksum };
    const identity = await fileIdentity(path);
    if (identity === this.identities[index]) {
      if (!quietWhenUnchanged) onEvent({ event: 'dataset_unchanged', ...base, message: `${path} is the file already served` });
      return;
    }
    if (identity === undefined) {
      // Between the unlink and the rename of a publish, or removed: the old version goes on serving.
      onEvent({ event: 'dataset_reload_failed', ...base, message: `${path} cannot be read; version ${short(base.from)} goes on serving` });
      return;
    }
    const started = performance.now();
    let next: Dataset;
    try {
      next = await open(path);
    } catch (error) {
      const reason = isCrosstabError(error) ? error.message : String((error as Error)?.message ?? error);
      onEvent({ event: 'dataset_reload_failed', ...base, message: `${reason}; version ${short(base.from)} goes on serving` });
      return;
    }
    const ms = Math.round(performance.now() - started);
    this.identities[index] = identity;
    if (next.info.survey !== served.info.survey) {
      await next.close();
      onEvent({ event: 'dataset_reload_failed', ...base, ms, message: `${path} now holds survey ${next.info.survey}, not ${served.info.survey}; version ${short(base.from)} goes on serving (serve another survey with its own --dataset)` });
      return;
    }
    if (next.info.checksum === served.info.checksum) {
      await next.close();
      onEvent({ event: 'dataset_unchanged', ...base, ms, message: `${path} was replaced by the same build (checksum ${short(base.from)})` });
      return;
    }
    // The handler's map and this list hold the same datasets: `served` is the one replaced.
    handler.replaceDataset?.(next);
    datasets[index] = next;
    onEvent({ event: 'dataset_reloaded', ...base, to: next.info.checksum, builtAt: next.info.createdAt, ms, message: `${served.info.survey}: serving ${short(next.info.checksum)} (built ${next.info.createdAt}) in place of ${short(base.from)}` });
    const drained = served.close({ drain: true, ...(this.options.drainMs === undefined ? {} : { timeoutMs: this.options.drainMs }) }).catch(() => {});
    this.drains.add(drained);
    void drained.then(() => this.drains.delete(drained));
  }
}

function short(checksum: string): string {
  return checksum.slice(0, 12);
}

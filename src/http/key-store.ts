import { timingSafeEqual } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { sha256, type ApiKeyRecord, type KeyStore } from '../keys/index.js';
import { readKeyFile, type KeyFile } from './key-file.js';

export type { AdmissionRefusal, KeyStore } from '../keys/index.js';

interface LoadedKey {
  record: ApiKeyRecord;
  digest: Buffer;
}

export interface FileKeyStoreOptions {
  /** How often the file is stat-checked for changes, in ms (default 500). 0 = every lookup. */
  reloadIntervalMs?: number;
  /** Told about a key file that changed but could not be read; the previous keys stay in force. */
  onReloadError?: (error: unknown) => void;
}

/** Distinct keys remembered per key-file version (a key file holds a handful of keys). */
const FOUND_CACHE_SIZE = 1024;

function load(file: KeyFile): LoadedKey[] {
  return file.keys.map((record) => ({ record, digest: Buffer.from(record.hash.slice('sha256:'.length), 'hex') }));
}

/**
 * Keys from a key file, re-read when the file changes (inode, size or mtime), so rotation
 * and revocation take effect without a restart. `crosstab keys` replaces the file by
 * rename; an editor that writes in place is caught by the mtime/size check.
 */
export class FileKeyStore implements KeyStore {
  private keys: LoadedKey[];
  /**
   * The record of each key found in `keys`, by the key string, so a key is hashed once per
   * version of the file, not twice per request. Emptied whenever `keys` is replaced (a
   * reload, rotation or revocation); misses are never stored, so an unknown key is always
   * hashed and compared, and a revoked one is looked up in the new keys.
   */
  private found = new Map<string, ApiKeyRecord>();
  private signature: string;
  private checkedAt = Date.now();
  private checking: Promise<void> | undefined;
  private readonly reloadIntervalMs: number;
  private readonly onReloadError: (error: unknown) => void;

  private constructor(readonly path: string, file: KeyFile, signature: string, options: FileKeyStoreOptions) {
    this.keys = load(file);
    this.signature = signature;
    this.reloadIntervalMs = options.reloadIntervalMs ?? 500;
    this.onReloadError = options.onReloadError ?? (() => {});
  }

  /** Reads the key file; rejects when it is missing or invalid. */
  static async open(path: string, options: FileKeyStoreOptions = {}): Promise<FileKeyStore> {
    const signature = await FileKeyStore.signatureOf(path);
    const file = await readKeyFile(path);
    return new FileKeyStore(path, file, signature, options);
  }

  private static async signatureOf(path: string): Promise<string> {
    const info = await stat(path).catch(() => undefined);
    return info ? `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}` : 'missing';
  }

  private async refresh(): Promise<void> {
    const signature = await FileKeyStore.signatureOf(this.path);
    if (signature === this.signature) return;
    try {
      const file = await readKeyFile(this.path);
      this.keys = load(file);
      this.found = new Map();
      this.signature = signature;
    } catch (error) {
      // Keep serving the last good keys; remember the signature so one bad file is reported once.
      this.signature = signature;
      this.onReloadError(error);
    }
  }

  /** A promise when the file is due for a check (or being checked), else undefined. */
  private maybeRefresh(): Promise<void> | undefined {
    if (this.checking === undefined && Date.now() - this.checkedAt < this.reloadIntervalMs) return undefined;
    this.checking ??= this.refresh().finally(() => {
      this.checkedAt = Date.now();
      this.checking = undefined;
    });
    return this.checking;
  }

  /** Synchronous between checks of the file (every reloadIntervalMs). */
  lookup(apiKey: string): ApiKeyRecord | undefined | Promise<ApiKeyRecord | undefined> {
    const refreshing = this.maybeRefresh();
    return refreshing === undefined ? this.find(apiKey) : refreshing.then(() => this.find(apiKey));
  }

  /** Whether the key file (as last read) holds `apiKey`: no file access. */
  knows(apiKey: string): boolean {
    return this.find(apiKey) !== undefined;
  }

  private find(apiKey: string): ApiKeyRecord | undefined {
    const cached = this.found.get(apiKey);
    if (cached !== undefined) return cached;
    const found = this.compare(apiKey);
    if (found !== undefined) {
      if (this.found.size >= FOUND_CACHE_SIZE) this.found.clear();
      this.found.set(apiKey, found);
    }
    return found;
  }

  private compare(apiKey: string): ApiKeyRecord | undefined {
    const digest = sha256(apiKey, 'buffer');
    let found: ApiKeyRecord | undefined;
    // Compare against every key, constant-time, without stopping at the first match.
    for (const key of this.keys) {
      if (key.digest.length === digest.length && timingSafeEqual(key.digest, digest)) found = key.record;
    }
    return found;
  }

  async close(): Promise<void> {
    await this.checking;
  }
}

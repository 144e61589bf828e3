import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeAtomically } from '../dataset/file/atomic-write.js';
import { CrosstabError, ErrorCode } from '../index.js';
import { generateApiKey, generateKeyId, hashApiKey, type ApiKeyRecord } from '../keys/index.js';

export { API_KEY_PATTERN, generateApiKey, generateKeyId, hashApiKey, sha256 } from '../keys/index.js';
export type { ApiKeyRecord } from '../keys/index.js';

/**
 * The API key file: JSON holding, per key, only a sha256 of the key, never the key itself.
 *
 * ```json
 * { "format": "crosstab-keys/1",
 *   "keys": [{ "id": "key_4f1c2a9b7d3e8a60", "name": "reporting-prod",
 *              "hash": "sha256:<64 hex>", "surveys": ["GSS"], "groups": ["_ALL_"],
 *              "createdAt": "2025-01-01T00:00:00.000Z", "expiresAt": null, "revoked": false }] }
 * ```
 */
export const KEY_FILE_FORMAT = 'crosstab-keys/1';

export interface KeyFile {
  format: typeof KEY_FILE_FORMAT;
  keys: ApiKeyRecord[];
}

function invalid(path: string, message: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidInput, `${path}: ${message}`, {
    file: path,
    hint: 'Fix the key file by hand or recreate it with `crosstab keys add`.',
  });
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string' && item.length > 0);
}

/** Validates a parsed key file; throws CrosstabError(invalid_input) naming the key at fault. */
export function parseKeyFile(text: string, path: string): KeyFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(path, `not valid JSON (${(error as Error).message})`);
  }
  const file = json as Partial<KeyFile> | null;
  if (typeof file !== 'object' || file === null || file.format !== KEY_FILE_FORMAT || !Array.isArray(file.keys)) {
    throw invalid(path, `expected {"format": "${KEY_FILE_FORMAT}", "keys": [...]}`);
  }
  const ids = new Set<string>();
  for (const [index, key] of file.keys.entries()) {
    const where = `keys[${index}]`;
    if (typeof key !== 'object' || key === null) throw invalid(path, `${where} is not an object`);
    if (typeof key.id !== 'string' || key.id === '') throw invalid(path, `${where}.id must be a non-empty string`);
    if (ids.has(key.id)) throw invalid(path, `${where}.id ${key.id} is used twice`);
    ids.add(key.id);
    if (typeof key.hash !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(key.hash)) throw invalid(path, `${where}.hash must be "sha256:" + 64 hex digits`);
    if (!isStringList(key.surveys)) throw invalid(path, `${where}.surveys must be a non-empty array of SurveyCodes or ["_ALL_"]`);
    if (!isStringList(key.groups)) throw invalid(path, `${where}.groups must be a non-empty array of group names or ["_ALL_"]`);
    if (key.expiresAt != null && (typeof key.expiresAt !== 'string' || Number.isNaN(Date.parse(key.expiresAt)))) {
      throw invalid(path, `${where}.expiresAt must be an ISO 8601 date-time or null`);
    }
    if (typeof key.revoked !== 'boolean') throw invalid(path, `${where}.revoked must be true or false`);
  }
  return file as KeyFile;
}

export async function readKeyFile(path: string): Promise<KeyFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new CrosstabError(ErrorCode.fileNotFound, `Key file ${path} does not exist.`, {
        file: path,
        hint: `Create it with \`crosstab keys add --keys ${path} --surveys <SurveyCode> --groups _ALL_\`.`,
      });
    }
    throw error;
  }
  return parseKeyFile(text, path);
}

/** Writes the file atomically (temp file, fsync, rename): a reader never sees half a file. */
export async function writeKeyFile(path: string, file: KeyFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeAtomically(path, (handle) => handle.writeFile(`${JSON.stringify(file, null, 2)}\n`, 'utf8'), { mode: 0o600 });
}

const LOCK_WAIT_MS = 5000;
const LOCK_STALE_MS = 30_000;

/**
 * Read-modify-write of the key file under an exclusive lock file (`<path>.lock`), so two
 * `crosstab keys` commands running at once do not lose each other's change.
 */
export async function updateKeyFile<T>(path: string, change: (file: KeyFile) => T, options: { create?: boolean } = {}): Promise<T> {
  const lockPath = `${path}.lock`;
  await mkdir(dirname(path), { recursive: true });
  const started = Date.now();
  for (;;) {
    try {
      await (await open(lockPath, 'wx', 0o600)).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = await stat(lockPath).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > LOCK_STALE_MS) {
        await rm(lockPath, { force: true });
      } else if (Date.now() - started > LOCK_WAIT_MS) {
        throw new CrosstabError(ErrorCode.locked, `Key file ${path} is locked by another process (${lockPath}).`, {
          file: lockPath,
          hint: 'Wait for the other `crosstab keys` command to finish, or delete the lock file if none is running.',
        });
      } else {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }
  try {
    let file: KeyFile;
    try {
      file = await readKeyFile(path);
    } catch (error) {
      if (!(options.create && error instanceof CrosstabError && error.code === ErrorCode.fileNotFound)) throw error;
      file = { format: KEY_FILE_FORMAT, keys: [] };
    }
    const result = change(file);
    await writeKeyFile(path, file);
    return result;
  } finally {
    await rm(lockPath, { force: true });
  }
}

export interface NewKeyOptions {
  surveys: readonly string[];
  groups: readonly string[];
  name?: string;
  /** ISO 8601 date-time, or a Date. */
  expiresAt?: string | Date | null;
}

/** Adds a key to the file (creating it if needed); returns the key, which is stored nowhere. */
export async function addApiKey(path: string, options: NewKeyOptions): Promise<{ apiKey: string; record: ApiKeyRecord }> {
  const record = newKeyRecord(options);
  const apiKey = generateApiKey();
  record.hash = hashApiKey(apiKey);
  await updateKeyFile(path, (file) => file.keys.push(record), { create: true });
  return { apiKey, record };
}

function checkList(value: readonly string[], option: string): string[] {
  const list = value.flatMap((item) => item.split(',')).map((item) => item.trim()).filter((item) => item !== '');
  if (list.length === 0) {
    throw new CrosstabError(ErrorCode.invalidOption, `${option} must name at least one value (or _ALL_).`, { field: option });
  }
  return [...new Set(list)];
}

function newKeyRecord(options: NewKeyOptions): ApiKeyRecord {
  let expiresAt: string | null = null;
  if (options.expiresAt != null) {
    const time = options.expiresAt instanceof Date ? options.expiresAt.getTime() : Date.parse(options.expiresAt);
    if (Number.isNaN(time)) {
      throw new CrosstabError(ErrorCode.invalidOption, `expires must be an ISO 8601 date-time such as 2027-01-01T00:00:00Z; got ${String(options.expiresAt)}.`, { field: 'expires' });
    }
    expiresAt = new Date(time).toISOString();
  }
  const record: ApiKeyRecord = {
    id: generateKeyId(),
    hash: '',
    surveys: checkList(options.surveys, 'surveys'),
    groups: checkList(options.groups, 'groups'),
    createdAt: new Date().toISOString(),
    expiresAt,
    revoked: false,
  };
  if (options.name !== undefined && options.name !== '') record.name = options.name;
  return record;
}

function findKey(file: KeyFile, idOrName: string, path: string): ApiKeyRecord {
  const byId = file.keys.find((key) => key.id === idOrName);
  if (byId) return byId;
  const byName = file.keys.filter((key) => key.name === idOrName && !key.revoked);
  if (byName.length === 1 && byName[0]) return byName[0];
  throw new CrosstabError(ErrorCode.invalidOption, byName.length > 1
    ? `${byName.length} active keys are named ${idOrName} in ${path}; give the key id instead.`
    : `No key with id or name ${idOrName} in ${path}.`, { field: 'key', hint: 'List the keys with `crosstab keys list`.' });
}

/** Marks a key revoked; the server refuses it within its reload interval. */
export async function revokeApiKey(path: string, idOrName: string): Promise<ApiKeyRecord> {
  return updateKeyFile(path, (file) => {
    const key = findKey(file, idOrName, path);
    if (!key.revoked) {
      key.revoked = true;
      key.revokedAt = new Date().toISOString();
    }
    return key;
  });
}

/** Issues a new key with the same entitlements as an existing one and revokes the old one. */
export async function rotateApiKey(path: string, idOrName: string, options: { expiresAt?: string | Date | null } = {}): Promise<{ apiKey: string; record: ApiKeyRecord; revoked: ApiKeyRecord }> {
  const apiKey = generateApiKey();
  return updateKeyFile(path, (file) => {
    const old = findKey(file, idOrName, path);
    const record = newKeyRecord({
      surveys: old.surveys,
      groups: old.groups,
      ...(old.name === undefined ? {} : { name: old.name }),
      expiresAt: options.expiresAt === undefined ? old.expiresAt ?? null : options.expiresAt,
    });
    record.hash = hashApiKey(apiKey);
    file.keys.push(record);
    old.revoked = true;
    old.revokedAt = new Date().toISOString();
    return { apiKey, record, revoked: old };
  });
}

export type KeyStatus = 'active' | 'expired' | 'revoked';

export function keyStatus(key: ApiKeyRecord, now = Date.now()): KeyStatus {
  if (key.revoked) return 'revoked';
  if (key.expiresAt != null && Date.parse(key.expiresAt) <= now) return 'expired';
  return 'active';
}

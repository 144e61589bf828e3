import { spawn, type ChildProcess } from 'node:child_process';
import { CrosstabError, ErrorCode } from '../errors.js';

/**
 * The exclusive lock of an embedded database: an `flock` on `<folder>.lock`, held on an open
 * file by a small helper process for as long as we live. The kernel arbitrates it: two
 * processes asking at once get one lock between them, and it is released when the last
 * holder of the open file goes, however it goes (SIGKILL included), in whatever PID
 * namespace (two containers on one volume). No pid is ever read to decide who holds it.
 *
 * Node has no flock of its own, so a helper holds it: `flock(1)` (util-linux; busybox has
 * one too) or, where that is missing (macOS), perl's flock. The helper reads its standard
 * input until the end: when this process exits, the kernel closes our end of that pipe, the
 * helper exits and the lock is released.
 */
export interface EmbeddedLock {
  readonly path: string;
  /** Set when the helper went away while we held the lock (killed by someone): the lock is gone. */
  readonly lost: string | undefined;
  /** Called once if the lock is lost while held. */
  onLost(listener: (reason: string) => void): void;
  /** Releases the lock and waits for the helper to exit. */
  release(): Promise<void>;
}

/** Exit status of the helpers when the lock is held by another process. */
const CONFLICT = 75;

/** `[command, args]` of a helper that takes the lock on `path`, prints `locked` once it holds it and then waits for the end of its input. */
export const LOCK_HELPERS = {
  flock: (path: string): [string, string[]] => ['flock', ['--exclusive', '--nonblock', '--conflict-exit-code', String(CONFLICT), path, 'sh', '-c', 'echo locked; exec cat >/dev/null']],
  perl: (path: string): [string, string[]] => [
    'perl',
    ['-e', `use Fcntl qw(:flock); open(my $f, '>>', $ARGV[0]) or die "$ARGV[0]: $!\\n"; flock($f, LOCK_EX | LOCK_NB) or exit ${CONFLICT}; $| = 1; print "locked\\n"; 1 while sysread(STDIN, my $b, 4096);`, path],
  ],
} as const;

export type LockHelper = keyof typeof LOCK_HELPERS;

function inUse(folder: string, path: string): CrosstabError {
  return new CrosstabError(ErrorCode.locked, `The embedded database ${folder} is in use by another process (it holds ${path}).`, {
    field: 'database',
    hint: 'An embedded database serves one process at a time: stop that process (e.g. `crosstab serve`, perhaps in another container on the same volume) first, or run every process on a PostgreSQL server with --database postgres://...',
  });
}

/** Starts one helper; resolves when it holds the lock, rejects with `locked` when another process does. */
function start(helper: LockHelper, path: string, folder: string): Promise<ChildProcess> {
  const [command, args] = LOCK_HELPERS[helper](path);
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('locked\n')) resolve(child);
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === CONFLICT) reject(inUse(folder, path));
      else reject(new CrosstabError(ErrorCode.locked, `Cannot lock the embedded database ${folder} (${path}): ${helper} exited with ${code}${stderr.trim() === '' ? '' : `: ${stderr.trim()}`}.`, { field: 'database', hint: 'Check that the folder beside the database is writable.' }));
    });
  });
}

/**
 * Takes the lock of `folder` on `path`, or rejects with a CrosstabError (`locked`) naming the
 * folder when another process holds it. `helpers` are tried in order until one is installed.
 */
export async function lockEmbedded(path: string, folder: string, helpers: readonly LockHelper[] = ['flock', 'perl']): Promise<EmbeddedLock> {
  let child: ChildProcess | undefined;
  for (const helper of helpers) {
    try {
      child = await start(helper, path, folder);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  if (child === undefined) {
    throw new CrosstabError(ErrorCode.locked, `Cannot lock the embedded database ${folder}: neither ${helpers.join(' nor ')} is installed.`, {
      field: 'database',
      hint: 'Install util-linux (flock) or perl, or run on a PostgreSQL server (`database` postgres://...).',
      hintOptions: ['database'],
    });
  }
  const helper = child;
  // The helper must not keep this process alive: it ends with us.
  helper.unref();
  for (const stream of [helper.stdin, helper.stdout, helper.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
  helper.stdin?.on('error', () => {});
  let releasing = false;
  let lost: string | undefined;
  const listeners: ((reason: string) => void)[] = [];
  const exited = new Promise<void>((resolve) => {
    helper.once('exit', (code, signal) => {
      if (!releasing) {
        lost = `the process holding the lock ${path} (pid ${helper.pid}) exited (${signal ?? `status ${code}`}), so another process may open the database`;
        for (const listener of listeners) listener(lost);
      }
      resolve();
    });
  });
  return {
    path,
    get lost() {
      return lost;
    },
    onLost(listener) {
      if (lost !== undefined) listener(lost);
      else listeners.push(listener);
    },
    async release() {
      releasing = true;
      helper.stdin?.end();
      const timer = setTimeout(() => helper.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    },
  };
}

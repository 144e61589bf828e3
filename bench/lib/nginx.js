// Runs deploy/nginx.conf on loopback: the shipped file with only the replica addresses, the
// listen address, `user` and the file paths swapped, and nginx in the foreground as a child
// process (`nginx -p DIR -e DIR/error.log -c DIR/nginx.conf -g 'daemon off;'`). Used by
// test/deploy/replicas-nginx.test.ts and bench/replicas-bench.js.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, freePorts } from './free-port.js';

export { freePort, freePorts };

export const nginxTemplate = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy', 'nginx.conf');

/**
 * The nginx binary: $CROSSTAB_NGINX when set, else on PATH, else Debian's /usr/sbin/nginx;
 * undefined when there is none.
 */
export function findNginx() {
  const chosen = process.env.CROSSTAB_NGINX;
  if (chosen !== undefined && chosen !== '') return existsSync(chosen) ? chosen : undefined;
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin', '/usr/local/sbin'];
  return dirs.map((dir) => join(dir, 'nginx')).find((path) => existsSync(path));
}


function replaceOnce(text, pattern, replacement, what) {
  if (!pattern.test(text)) throw new Error(`deploy/nginx.conf has no ${what} line (${pattern}); update bench/lib/nginx.js with the template`);
  return text.replace(pattern, replacement);
}

/**
 * The template with its upstream servers replaced by `replicas` ("127.0.0.1:port", each with
 * the parameters of the template's first server line), `listen` instead of port 80, and pid,
 * logs and temporary files under `dir`.
 */
export function renderNginxConf(template, { listen, replicas, dir }) {
  let text = template;
  const root = process.getuid?.() === 0;
  text = replaceOnce(text, /^user [^;]+;\n/m, root ? 'user root;\n' : '', 'user');
  text = replaceOnce(text, /^pid [^;]+;/m, `pid ${join(dir, 'nginx.pid')};`, 'pid');
  text = replaceOnce(text, /^error_log \S+/m, `error_log ${join(dir, 'error.log')}`, 'error_log');
  text = replaceOnce(text, /access_log \S+/, `access_log ${join(dir, 'access.log')}`, 'access_log');
  text = replaceOnce(text, /listen 80;/, `listen ${listen};`, 'listen 80');
  for (const kind of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    text = replaceOnce(text, new RegExp(`${kind}_temp_path \\S+;`), `${kind}_temp_path ${join(dir, 'temp', kind)};`, `${kind}_temp_path`);
  }
  const servers = [...text.matchAll(/^(\s*)server (\S+?)((?: [^;\n]*)?);\n/gm)];
  if (servers.length === 0) throw new Error('deploy/nginx.conf has no upstream server lines');
  const [first] = servers;
  const lines = replicas.map((address) => `${first[1]}server ${address}${first[3]};\n`).join('');
  const start = first.index;
  const last = servers[servers.length - 1];
  return text.slice(0, start) + lines + text.slice(last.index + last[0].length);
}

function waitForPort(port, timeoutMs, exited) {
  const started = Date.now();
  return new Promise((resolveWait, reject) => {
    let gone = false;
    exited.then((code) => {
      gone = true;
      reject(new Error(`nginx exited with ${code} before listening`));
    });
    const attempt = () => {
      if (gone) return;
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolveWait();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() - started > timeoutMs) reject(new Error(`nginx did not listen on ${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/**
 * Renders deploy/nginx.conf for `replicas` into `dir`, checks it with `nginx -t` and starts
 * nginx in the foreground. `stop()` shuts it down gracefully (SIGQUIT), which flushes the
 * access log.
 */
export async function startNginx({ dir, replicas, binary = findNginx(), port }) {
  if (binary === undefined) throw new Error('nginx is not installed: run `apt-get install -y nginx` (.ci/run does)');
  mkdirSync(join(dir, 'temp'), { recursive: true });
  const listenPort = port ?? (await freePort());
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, renderNginxConf(readFileSync(nginxTemplate, 'utf8'), { listen: `127.0.0.1:${listenPort}`, replicas, dir }));
  const args = ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf];
  try {
    execFileSync(binary, [...args, '-t', '-q'], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    throw new Error(`nginx -t refused ${conf}:\n${error.stderr?.toString() ?? error.message}`);
  }
  const child = spawn(binary, [...args, '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit(code ?? signal)));
  await waitForPort(listenPort, 10_000, exited);
  let stopping;
  return {
    child,
    conf,
    origin: `http://127.0.0.1:${listenPort}`,
    exited,
    output: () => output,
    errorLog: () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''),
    /** The access log's JSON lines (deploy/nginx.conf's `crosstab` format), as flushed so far. */
    accessLog: () =>
      existsSync(join(dir, 'access.log'))
        ? readFileSync(join(dir, 'access.log'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
        : [],
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

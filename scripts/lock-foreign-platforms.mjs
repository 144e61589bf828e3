// The npm registry reachable here serves only this machine's platform builds of packages
// that ship native binaries as per-platform optional packages (@duckdb/node-bindings-*,
// @rollup/rollup-*). A lock written here therefore lacks the other platforms' entries and
// `npm ci` refuses it ("Missing: ... from lock file"). This adds them the way a lock
// written with full registry access has them: optional, with os / cpu / libc taken from
// the package name, so npm skips them on every other platform without fetching anything.
// Run after any `npm install` that rewrites package-lock.json.
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['android', 'darwin', 'freebsd', 'linux', 'openbsd', 'openharmony', 'sunos', 'win32', 'aix'];
const CPU = ['arm64', 'arm', 'x64', 'ia32', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el'];

/** os / cpu / libc of a platform package such as @rollup/rollup-linux-arm-musleabihf. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.includes(part));
  const cpu = parts.find((part) => CPU.includes(part));
  if (!os || !cpu) return undefined;
  const platform = { os: [os], cpu: [cpu] };
  if (os === 'linux') platform.libc = [parts.some((part) => part.startsWith('musl')) ? 'musl' : 'glibc'];
  return platform;
}

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    if (lock.packages[target]) continue;
    const platform = platformOf(name);
    if (!platform) throw new Error(`${key}: optional dependency ${name} is not in the lock and is not a platform package; run npm install`);
    const version = spec.replace(/^[\^~=]/, '');
    lock.packages[target] = { version, ...(entry.dev ? { dev: true } : {}), optional: true, ...platform };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-foreign-platforms: ${added} entries added`);

// `npm run build` when npm prepares this checkout: on `npm install` and before `npm pack`.
// `npx crosstab` run inside the checkout prepares it too: npm installs the checkout into its
// npx cache to link the `crosstab` bin, and the whole build (about 150 s) ran there unseen,
// replacing dist/ under a server that `npm start` was running from it. So under `npm exec`
// a checkout that is already built is left as it is.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const built = ['dist/cli/main.js', 'build/kernel.wasm', 'datasets/build/gss.arrow', 'datasets/build/nhanes.arrow'].every((path) => existsSync(path));
if (process.env.npm_command === 'exec' && built) process.exit(0);
if (process.env.npm_command === 'exec') process.stderr.write('crosstab-engine: this checkout is not built yet; building it first (npm run build)\n');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const { status, error } = spawnSync(npm, ['run', 'build'], { stdio: 'inherit' });
if (error) throw error;
process.exit(status ?? 1);

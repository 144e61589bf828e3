// One process of bench/s3-overhead.js: opens the ACS dataset with the cell cache off and
// runs the S3 table (every OCCP value by every INDP value, base ESR=1,2, each entry an
// expression as bench/shapes/s3 passes them) `tables` times after 2 warm-ups, on one
// execution. Prints one JSON line: wall and process-CPU ms per table, the process's minor
// page faults per table (fresh memory the system had to map: mostly the result arrays), and the
// process.hrtime window (µs) of the timed tables, so a --cpu-prof of this process can be
// cut to that window.
//   node bench/lib/s3-child.js DIST_INDEX_JS DATASET inline|pool TABLES
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';

const [, , dist, dataset, execution, tablesText] = process.argv;
const tables = Number(tablesText);
const api = await import(pathToFileURL(dist).href);
const ds = await api.openDataset(dataset, { cellCache: 0, execution });
const values = (name) => ds.info.variables.find((v) => v.name === name).values.map((v) => api.valueExpression(name, v.value));
const query = { base: 'ESR=1,2', rows: values('OCCP'), columns: values('INDP') };
// Inline, the time in the kernel's group-by calls, through the kernel's runTask (every
// inline task goes through it): reached inside the dataset, so absent if that moves.
const kernel = ds.engine?.kernel;
let kernelMs = 0;
if (execution === 'inline' && typeof kernel?.runTask === 'function') {
  const runTask = kernel.runTask.bind(kernel);
  kernel.runTask = (task) => {
    const t0 = performance.now();
    try {
      return runTask(task);
    } finally {
      if (task.fn === 'groupBy') kernelMs += performance.now() - t0;
    }
  };
}
await ds.table(query);
await ds.table(query);
const wall = [];
const cpu = [];
const kernelTimes = [];
const faults = [];
let respondents = 0;
let last;
const from = process.hrtime.bigint() / 1000n;
for (let i = 0; i < tables; i++) {
  kernelMs = 0;
  const f0 = process.resourceUsage().minorPageFault;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await ds.table(query);
  wall.push(performance.now() - t0);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1000);
  faults.push(process.resourceUsage().minorPageFault - f0);
  kernelTimes.push(kernelMs);
  respondents = result.total.respondents;
  last = result;
  if (result.execution !== execution) throw new Error(`bench: asked for ${execution}, the table ran ${result.execution}`);
}
const to = process.hrtime.bigint() / 1000n;
const digest = resultDigest(last);
console.log(JSON.stringify({ execution, wall, cpu, kernel: execution === 'inline' && kernel ? kernelTimes : null, faults, respondents, digest, window: [Number(from), Number(to)], load: loadavg()[0] }));
await ds.close();

/** SHA-256 of every figure of a table result: the cells' three arrays, then the margins and total. */
function resultDigest(result) {
  const hash = createHash('sha256');
  for (const array of [result.weighted, result.sumSqWeights, result.respondents]) hash.update(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
  const margins = [...result.rowTotals, ...result.columnTotals, result.total].flatMap((cell) => [cell.weighted, cell.sumSqWeights, cell.respondents]);
  hash.update(new Uint8Array(Float64Array.from(margins).buffer));
  return hash.digest('hex');
}

// Command line of bench/run.js.
export const USAGE = `usage: node --expose-gc bench/run.js [options]
  --quick              fewer reps, S5 on 10 sampled rows, ingest timed in-process (~2 min)
  --shapes S1,S2,...   shapes to run (default: S1,S2,S3,S4,S5)
  --peers a,b,...      peers to run (default: all; see bench/peers/index.js)
  --variants           also time every applicable alternative method (DuckDB SQL strategies)
  --json FILE          write machine-readable results
  --md FILE            write the printed tables as Markdown with the machine description
  --s5-rows N          S5 rows to sample (default 50, quick 10; 2000 = the full table)
  --reps N             override the timed repetitions of every shape
  --ingest / --no-ingest   measure ingest (seconds, peak memory) in one child process per peer
                       (default: on, off with --quick)
  --duckdb-threads N   DuckDB threads (default: all cores)
  --engine-build HOW   how the engine builds ACS: 'indexed' (default: --range-index on the numeric
                       columns the shapes ask ranges of) or 'default' (no range-index option: the
                       build a user gets, with the automatic range index)
  --no-bounds          skip the popcount / memory bandwidth measurement
  --load / --no-load   measure getting data in: build per input format, ACS build vs DuckDB load,
                       openDataset to first answer, cold \`crosstab query\` (default: on)
  --load-only          only the load section (no shapes, no ingest)`;

export function parseArgs(argv) {
  const options = { quick: false, shapes: null, peers: null, variants: false, json: null, md: null, s5Rows: null, reps: null, ingest: null, duckdbThreads: null, engineBuild: 'indexed', bounds: true, load: true, loadOnly: false };
  const list = (value) => value.split(',').map((s) => s.trim()).filter(Boolean);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`bench: ${arg} needs a value\n${USAGE}`);
      return v;
    };
    const count = () => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new Error(`bench: ${arg} must be a positive integer`);
      return n;
    };
    switch (arg) {
      case '--quick': options.quick = true; break;
      case '--shapes': options.shapes = list(value()).map((s) => s.toUpperCase()); break;
      case '--peers': options.peers = list(value()); break;
      case '--variants': options.variants = true; break;
      case '--json': options.json = value(); break;
      case '--md': options.md = value(); break;
      case '--s5-rows': options.s5Rows = count(); break;
      case '--reps': options.reps = count(); break;
      case '--ingest': options.ingest = true; break;
      case '--no-ingest': options.ingest = false; break;
      case '--duckdb-threads': options.duckdbThreads = count(); break;
      case '--engine-build': {
        const how = value();
        if (how !== 'indexed' && how !== 'default') throw new Error(`bench: --engine-build must be indexed or default, not '${how}'`);
        options.engineBuild = how;
        break;
      }
      case '--no-bounds': options.bounds = false; break;
      case '--load': options.load = true; break;
      case '--no-load': options.load = false; break;
      case '--load-only': options.loadOnly = true; options.load = true; options.ingest = false; options.bounds = false; options.shapes = []; break;
      case '-h': case '--help': options.help = true; break;
      default: throw new Error(`bench: unknown option '${arg}'\n${USAGE}`);
    }
  }
  if (options.ingest === null) options.ingest = !options.quick;
  return options;
}

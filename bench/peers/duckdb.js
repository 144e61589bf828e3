// Peer 1: DuckDB (@duckdb/node-api), in-memory database, default threads (all cores).
// Ingest: read_csv with every column typed explicitly (zero-padded STATE/PUMA and
// SERIALNO as VARCHAR, codes as INTEGER, fractional weights DOUBLE).
// Queries: the SQL an analyst writes, one strategy per shape (see README.md):
//   filter        SUM(w) FILTER (WHERE row AND col), COUNT(*) FILTER (...) in one scan
//   group-by      GROUP BY rowvar, colvar (a single grouping set)
//   grouping-sets GROUP BY GROUPING SETS ((a,b), (a), ...) over single-value codes
//   value-rollup  row-code long table joined back to the respondents, UNPIVOT + GROUP BY
//                 (row code, variable, value), then values -> column codes, summed again
//   per-variable-join  (respondent, code) tables per variable (equi-join on a value->code
//                 map), UNION ALL, joined rows x columns on respondent
//   long-join     (respondent, code) long tables via UNPIVOT + a value->code map, self-joined on respondent
import { DuckDBInstance } from '@duckdb/node-api';

const ident = (name) => `"${name.replace(/"/g, '""')}"`;
const literal = (value) => (typeof value === 'number' ? String(value) : `'${String(value).replace(/'/g, "''")}'`);

/** SQL predicate for a code tree; NULL (blank) never satisfies = / IN / BETWEEN, NOT includes blanks. */
export function sqlCondition(expr) {
  if (expr.all) return 'TRUE';
  if (expr.and) return `(${expr.and.map(sqlCondition).join(' AND ')})`;
  if (expr.or) return `(${expr.or.map(sqlCondition).join(' OR ')})`;
  if (expr.not) return `(NOT COALESCE(${sqlCondition(expr.not)}, FALSE))`;
  const column = ident(expr.var);
  if (expr.missing) return `${column} IS NULL`;
  if (expr.in) return expr.in.length === 1 ? `${column} = ${literal(expr.in[0])}` : `${column} IN (${expr.in.map(literal).join(', ')})`;
  if (expr.min !== undefined && expr.max !== undefined) return `${column} BETWEEN ${expr.min} AND ${expr.max}`;
  return expr.min !== undefined ? `${column} >= ${expr.min}` : `${column} <= ${expr.max}`;
}

const SQL_TYPE = { skip: 'VARCHAR', text: 'VARCHAR', category: 'INTEGER', numeric: 'INTEGER', float: 'DOUBLE' };
const isSingleValue = (c) => c.expr.all || (c.expr.var && c.expr.in && c.expr.in.length === 1);
const isColumnCode = (c) => c.expr.var && !c.expr.missing && (c.expr.in || c.expr.min !== undefined || c.expr.max !== undefined);

/** Strategies in order of preference per shape (measured on this machine, see README.md). */
const PREFERENCE = {
  S1: ['filter'],
  S2: ['grouping-sets', 'filter'],
  S3: ['grouping-sets'],
  S4: ['grouping-sets', 'long-join'],
  S5: ['value-rollup', 'per-variable-join', 'long-join'],
};
const GENERAL_ORDER = ['filter', 'grouping-sets', 'value-rollup', 'per-variable-join', 'long-join'];

export function createPeer({ threads } = {}) {
  let instance, connection;
  const tables = new Map();

  const read = async (sql) => (await connection.runAndReadAll(sql)).getRows();

  const strategies = {
    filter: {
      applies: (shape) => shape.rows.length * shape.columns.length <= 256,
      sql(shape, table) {
        const aggregates = [];
        for (const row of shape.rows) {
          for (const column of shape.columns) {
            const parts = [row, column].filter((c) => !c.expr.all).map((c) => sqlCondition(c.expr));
            const where = parts.length ? ` FILTER (WHERE ${parts.join(' AND ')})` : '';
            aggregates.push(`(SUM(w)${where})::DOUBLE`, `COUNT(*)${where}`);
          }
        }
        return `SELECT ${aggregates.join(',\n  ')}\nFROM (SELECT ${ident(table.weight)} AS w, * FROM ${table.name}) WHERE ${sqlCondition(shape.base.expr)}`;
      },
      async run(shape, table) {
        const sql = this.sql(shape, table);
        const [values] = await read(sql);
        const n = shape.rows.length * shape.columns.length;
        const weighted = new Float64Array(n), respondents = new Float64Array(n);
        for (let k = 0; k < n; k++) {
          weighted[k] = Number(values[2 * k] ?? 0);
          respondents[k] = Number(values[2 * k + 1]);
        }
        return { weighted, respondents, sql };
      },
    },

    'grouping-sets': {
      applies: (shape) => shape.rows.every(isSingleValue) && shape.columns.every(isSingleValue),
      plan(shape) {
        const varOf = (c) => (c.expr.all ? null : c.expr.var);
        const keyOf = (a, b) => [...new Set([a, b].filter(Boolean))].sort().join('\u0000');
        const sets = new Map();
        for (const row of new Set(shape.rows.map(varOf))) {
          for (const column of new Set(shape.columns.map(varOf))) {
            const key = keyOf(row, column);
            sets.set(key, key === '' ? [] : key.split('\u0000'));
          }
        }
        const variables = [...new Set([...sets.values()].flat())].sort();
        return { varOf, keyOf, sets, variables };
      },
      sql(shape, table) {
        const { sets, variables } = this.plan(shape);
        const select = variables.map(ident).join(', ');
        const base = sqlCondition(shape.base.expr);
        const w = ident(table.weight);
        if (sets.size === 1 && [...sets.values()][0].length === variables.length) {
          return `SELECT 0 AS g, ${select}, SUM(${w})::DOUBLE AS w, COUNT(*) AS n\nFROM ${table.name} WHERE ${base}\nGROUP BY ${select}`;
        }
        const groupingSets = [...sets.values()].map((set) => `(${set.map(ident).join(', ')})`).join(', ');
        return `SELECT GROUPING_ID(${select}) AS g, ${select}, SUM(${w})::DOUBLE AS w, COUNT(*) AS n\nFROM ${table.name} WHERE ${base}\nGROUP BY GROUPING SETS (${groupingSets})`;
      },
      async run(shape, table) {
        const { varOf, keyOf, variables } = this.plan(shape);
        const sql = this.sql(shape, table);
        const index = (codes) => {
          const byValue = new Map(), all = [];
          codes.forEach((c, i) => {
            if (c.expr.all) { all.push(i); return; }
            const key = `${c.expr.var}\u0000${c.expr.in[0]}`;
            if (!byValue.has(key)) byValue.set(key, []);
            byValue.get(key).push(i);
          });
          return { byValue, all };
        };
        const rowIndex = index(shape.rows), colIndex = index(shape.columns);
        const C = shape.columns.length;
        const weighted = new Float64Array(shape.rows.length * C), respondents = new Float64Array(shape.rows.length * C);
        const k = variables.length;
        for (const record of await read(sql)) {
          const g = Number(record[0]);
          const grouped = [];
          let blank = false;
          variables.forEach((variable, i) => {
            if (((g >> (k - 1 - i)) & 1) === 0) {
              const value = record[1 + i];
              if (value === null) blank = true;
              grouped.push([variable, typeof value === 'bigint' ? Number(value) : value]);
            }
          });
          if (blank) continue;
          const setKey = grouped.map(([v]) => v).sort().join('\u0000');
          const candidates = ({ byValue, all }) => [...grouped.flatMap(([v, value]) => byValue.get(`${v}\u0000${value}`) ?? []), ...all];
          const w = record[k + 1], n = Number(record[k + 2]);
          for (const r of candidates(rowIndex)) {
            for (const c of candidates(colIndex)) {
              if (keyOf(varOf(shape.rows[r]), varOf(shape.columns[c])) !== setKey) continue;
              weighted[r * C + c] += w;
              respondents[r * C + c] += n;
            }
          }
        }
        return { weighted, respondents, sql };
      },
    },

    'long-join': {
      applies: (shape) => [...shape.rows, ...shape.columns].every(isColumnCode),
      async setup(shape, table) {
        for (const [name, codes] of [['bench_row_codes', shape.rows], ['bench_col_codes', shape.columns]]) {
          await connection.run(`CREATE OR REPLACE TEMP TABLE ${name} (code INTEGER, var VARCHAR, lo DOUBLE, hi DOUBLE)`);
          const values = codes.flatMap((c, i) => (c.expr.in
            ? c.expr.in.map((v) => `(${i}, ${literal(c.expr.var)}, ${v}, ${v})`)
            : [`(${i}, ${literal(c.expr.var)}, ${c.expr.min ?? '-1e308'}, ${c.expr.max ?? '1e308'})`]));
          for (let k = 0; k < values.length; k += 5000) await connection.run(`INSERT INTO ${name} VALUES ${values.slice(k, k + 5000).join(', ')}`);
        }
      },
      sql(shape, table) {
        const variables = [...new Set([...shape.rows, ...shape.columns].map((c) => c.expr.var))].sort().map(ident).join(', ');
        return `WITH b AS MATERIALIZED (
  SELECT rowid AS rid, ${ident(table.weight)} AS w, ${variables} FROM ${table.name} WHERE ${sqlCondition(shape.base.expr)}),
long AS MATERIALIZED (UNPIVOT b ON ${variables} INTO NAME var VALUE val),
vals AS (SELECT DISTINCT var, val FROM long),
rmap AS (SELECT v.var, v.val, c.code FROM vals v JOIN bench_row_codes c ON v.var = c.var AND v.val BETWEEN c.lo AND c.hi),
cmap AS (SELECT v.var, v.val, c.code FROM vals v JOIN bench_col_codes c ON v.var = c.var AND v.val BETWEEN c.lo AND c.hi),
rl AS (SELECT l.rid, l.w, m.code FROM long l JOIN rmap m USING (var, val)),
cl AS (SELECT l.rid, m.code FROM long l JOIN cmap m USING (var, val))
SELECT rl.code AS r, cl.code AS c, SUM(rl.w)::DOUBLE AS w, COUNT(*) AS n
FROM rl JOIN cl USING (rid)
GROUP BY ALL`;
      },
      async run(shape, table) {
        await this.setup(shape, table);
        const sql = this.sql(shape, table);
        const C = shape.columns.length;
        const weighted = new Float64Array(shape.rows.length * C), respondents = new Float64Array(shape.rows.length * C);
        for (const [r, c, w, n] of await read(sql)) {
          weighted[r * C + c] = w;
          respondents[r * C + c] = Number(n);
        }
        return { weighted, respondents, sql };
      },
    },
  };

  strategies['per-variable-join'] = {
    applies: strategies['long-join'].applies,
    setup: strategies['long-join'].setup,
    sql(shape, table) {
      const all = [...new Set([...shape.rows, ...shape.columns].map((c) => c.expr.var))].sort();
      const side = (codes, codeTable, withWeight) => [...new Set(codes.map((c) => c.expr.var))].sort().map((variable) => {
        const v = ident(variable);
        return `  SELECT b.rid${withWeight ? ', b.w' : ''}, m.code FROM b JOIN (
    SELECT d.val, c.code FROM (SELECT DISTINCT ${v} AS val FROM b WHERE ${v} IS NOT NULL) d
    JOIN ${codeTable} c ON c.var = ${literal(variable)} AND d.val BETWEEN c.lo AND c.hi) m ON b.${v} = m.val`;
      }).join('\n  UNION ALL\n');
      return `WITH b AS MATERIALIZED (
  SELECT rowid AS rid, ${ident(table.weight)} AS w, ${all.map(ident).join(', ')} FROM ${table.name} WHERE ${sqlCondition(shape.base.expr)}),
rl AS (
${side(shape.rows, 'bench_row_codes', true)}),
cl AS (
${side(shape.columns, 'bench_col_codes', false)})
SELECT rl.code AS r, cl.code AS c, SUM(rl.w)::DOUBLE AS w, COUNT(*) AS n
FROM rl JOIN cl USING (rid)
GROUP BY ALL`;
    },
    run: strategies['long-join'].run,
  };

  // Aggregate first, map to column codes later: every column code is a union of
  // values of one variable, so a cell is a sum of (row code, variable, value) sums.
  strategies['value-rollup'] = {
    applies: strategies['long-join'].applies,
    setup: strategies['long-join'].setup,
    sql(shape, table) {
      const rowVars = [...new Set(shape.rows.map((c) => c.expr.var))].sort();
      const colVars = [...new Set(shape.columns.map((c) => c.expr.var))].sort();
      const all = [...new Set([...rowVars, ...colVars])].sort();
      const rl = rowVars.map((variable) => {
        const v = ident(variable);
        return `  SELECT b.rid, b.w, m.code FROM b JOIN (
    SELECT d.val, c.code FROM (SELECT DISTINCT ${v} AS val FROM b WHERE ${v} IS NOT NULL) d
    JOIN bench_row_codes c ON c.var = ${literal(variable)} AND d.val BETWEEN c.lo AND c.hi) m ON b.${v} = m.val`;
      }).join('\n  UNION ALL\n');
      return `WITH b AS MATERIALIZED (
  SELECT rowid AS rid, ${ident(table.weight)} AS w, ${all.map(ident).join(', ')} FROM ${table.name} WHERE ${sqlCondition(shape.base.expr)}),
rl AS (
${rl}),
j AS (SELECT rl.code AS r, rl.w, ${colVars.map((v) => `b.${ident(v)}`).join(', ')} FROM rl JOIN b USING (rid)),
agg AS MATERIALIZED (
  SELECT r, var, val, SUM(w) AS w, COUNT(*) AS n
  FROM (UNPIVOT j ON ${colVars.map(ident).join(', ')} INTO NAME var VALUE val)
  GROUP BY ALL),
vals AS (SELECT DISTINCT var, val FROM agg),
cmap AS (SELECT v.var, v.val, c.code FROM vals v JOIN bench_col_codes c ON v.var = c.var AND v.val BETWEEN c.lo AND c.hi)
SELECT agg.r, cmap.code AS c, SUM(agg.w)::DOUBLE AS w, SUM(agg.n) AS n
FROM agg JOIN cmap USING (var, val)
GROUP BY ALL`;
    },
    run: strategies['long-join'].run,
  };

  return {
    name: 'duckdb',
    description: 'DuckDB in-memory (@duckdb/node-api), all cores; SQL per shape: FILTER aggregates / GROUP BY / GROUPING SETS / UNPIVOT long self-join',
    usesColumnStore: false,
    async available() {
      instance = await DuckDBInstance.create(':memory:', threads ? { threads: String(threads) } : {});
      connection = await instance.connect();
      const [[version, usedThreads]] = await read(`SELECT version(), current_setting('threads')`);
      return { ok: true, version, threads: Number(usedThreads) };
    },
    async prepare({ dataset }) {
      const name = `bench_${dataset.id}`;
      const columns = Object.entries(dataset.columns)
        .map(([column, kind]) => `${literal(column)}: '${kind === 'weight' ? (dataset.weightIsInteger ? 'INTEGER' : 'DOUBLE') : SQL_TYPE[kind]}'`)
        .join(', ');
      const sql = `CREATE OR REPLACE TABLE ${name} AS SELECT * FROM read_csv(${literal(dataset.path)}, header = true, delim = ',', quote = '', escape = '', auto_detect = false, columns = {${columns}})`;
      await connection.run(sql);
      const [[rows]] = await read(`SELECT COUNT(*) FROM ${name}`);
      if (Number(rows) !== dataset.rows) throw new Error(`duckdb: loaded ${rows} rows from ${dataset.path}, expected ${dataset.rows}`);
      tables.set(dataset.id, { name, weight: dataset.weight });
      return { sql };
    },
    variantsFor(shape) {
      const order = [...(PREFERENCE[shape.id] ?? []), ...GENERAL_ORDER];
      return [...new Set(order)].filter((name) => strategies[name].applies(shape));
    },
    async run(shape, variant) {
      const strategy = variant ?? this.variantsFor(shape)[0];
      if (!strategy) throw new Error(`duckdb: no SQL strategy applies to ${shape.id}`);
      const result = await strategies[strategy].run(shape, tables.get(shape.dataset));
      return { ...result, method: strategy };
    },
    async release(datasetId) {
      const table = tables.get(datasetId);
      if (table) await connection.run(`DROP TABLE ${table.name}`);
      tables.delete(datasetId);
    },
    async close() {
      connection?.closeSync?.();
      instance?.closeSync?.();
    },
  };
}

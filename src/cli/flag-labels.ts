/**
 * The command-line flag of each field the library names in its errors (`expires` is
 * `--expires`): the CLI's labels for library errors (see labelledMessage in src/errors.ts).
 */
const FLAGS: Readonly<Record<string, string>> = {
  account: '--account',
  by: '--by',
  claim: '--claim',
  cluster: '--cluster',
  codebook: '--codebook',
  columns: '--columns',
  database: '--database',
  email: '--email',
  epsilon: '--epsilon',
  exclude: '--exclude',
  expires: '--expires',
  from: '--from',
  groups: '--groups',
  id: '--id',
  issuer: '--issuer',
  keepVersions: '--keep-versions',
  lonelyPsu: '--lonely-psu',
  maxIterations: '--max-iterations',
  name: '--name',
  out: '--out',
  rangeIndex: '--range-index',
  replace: '--replace',
  shardUrl: '--shard-url',
  shards: '--shards',
  stability: '--unstable-max/--very-unstable-max',
  subject: '--subject',
  survey: '--survey',
  surveys: '--surveys',
  table: '--table',
  threads: '--threads',
  to: '--to',
  trim: '--trim',
  units: '--units',
  weights: '--weight',
};

/** The flag that sets `field`, if the CLI has one; `shardUrl[2]` (the third of a repeated flag) is `--shard-url[2]`. */
export function flagOf(field: string): string | undefined {
  const [, name = field, index = ''] = /^(.*?)(\[\d+\])?$/.exec(field) ?? [];
  return Object.hasOwn(FLAGS, name) ? `${FLAGS[name]}${index}` : undefined;
}

/**
 * The command-line flag of each field the library names in its errors (`expires` is
 * `--expires`): the CLI's labels for library errors (see labelledMessage in src/errors.ts).
 */
const FLAGS: Readonly<Record<string, string>> = {
  account: '--account',
  by: '--by',
  claim: '--claim',
  email: '--email',
  exclude: '--exclude',
  expires: '--expires',
  from: '--from',
  groups: '--groups',
  issuer: '--issuer',
  name: '--name',
  out: '--out',
  stability: '--unstable-max/--very-unstable-max',
  subject: '--subject',
  survey: '--survey',
  surveys: '--surveys',
  threads: '--threads',
  to: '--to',
  units: '--units',
  weights: '--weight',
};

/** The flag that sets `field`, if the CLI has one. */
export function flagOf(field: string): string | undefined {
  return Object.hasOwn(FLAGS, field) ? FLAGS[field] : undefined;
}

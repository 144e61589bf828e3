/**
 * Where a command finds the saved audiences its `@name`s stand for: `--audiences FILE` (one
 * `name=expression` a line) or an account's audiences in the access database (`--account NAME`,
 * with `--user EMAIL` for that user's private ones too, as the service shows them to that user).
 */
import { readFile } from 'node:fs/promises';
import { findAccount, listAudiences, listUsers } from '../access/index.js';
import { CrosstabError, ErrorCode } from '../errors.js';
import { audienceLookup } from '../http/audience-expansion.js';
import type { AudienceViewer } from '../keys/index.js';
import type { AudienceLookup } from '../query/audiences.js';
import { AUDIENCE_NAME, shorten } from '../text/expression-text.js';
import { withDatabase } from './database-option.js';

export interface AudienceSource {
  lookup: AudienceLookup;
  /** What an unknown audience's hint says to do. */
  hint: string;
}

/**
 * The audiences of `--audiences FILE`: a line `name=expression` per audience (the name before
 * the first `=`), blank lines and lines starting with `#` ignored. A name written twice, a name
 * that is no audience name, or an empty expression is refused naming file:line.
 */
export async function audiencesFromFile(path: string): Promise<AudienceSource> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CrosstabError(ErrorCode.invalidOption, `--audiences ${path}: cannot read it: ${(error as Error).message}`, { field: '--audiences', hint: 'Pass a text file of name=expression lines.' });
  }
  const byName = new Map<string, { id: string; name: string; expression: string; line: number }>();
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const at = line.indexOf('=');
    const bad = (what: string, hint: string) => new CrosstabError(ErrorCode.invalidOption, `${path}:${i + 1}: ${what}`, { field: '--audiences', file: path, line: i + 1, hint });
    if (at < 0) throw bad(`"${shorten(line)}" is no name=expression line`, 'Write each audience as name=expression, e.g. young-women=sex=2 AND age=18..34.');
    const name = line.slice(0, at).trim().replace(/^@/, '');
    const expression = line.slice(at + 1).trim();
    if (!AUDIENCE_NAME.test(name)) throw bad(`"${shorten(name)}" is not an audience name`, 'Names are lower case letters, digits, - and _ (at most 64), starting with a letter or digit.');
    if (expression === '') throw bad(`audience ${name} has no expression`, `Write its expression after the =, e.g. ${name}=sex=2.`);
    const earlier = byName.get(name);
    if (earlier !== undefined) throw bad(`audience ${name} is defined again (first on line ${earlier.line})`, 'Define each audience once.');
    byName.set(name, { id: `${path}:${name}`, name, expression, line: i + 1 });
  });
  return { lookup: (name) => byName.get(name), hint: `Define it in ${path} (a line name=expression).` };
}

/** The audiences `--account NAME` (and `--user EMAIL`) may use in `survey`, from the access database. */
export async function audiencesFromDatabase(database: string | undefined, account: string, user: string | undefined, survey: string): Promise<AudienceSource> {
  const { records, viewer } = await withDatabase(database, async (db) => {
    const found = await findAccount(db, account, '--account');
    const viewer: AudienceViewer = { accountId: found.id };
    if (user !== undefined) {
      const match = (await listUsers(db, found.id)).find((candidate) => candidate.email.toLowerCase() === user.toLowerCase());
      if (match === undefined) throw new CrosstabError(ErrorCode.invalidOption, `--user ${user}: no user of account ${account} has this email`, { field: '--user', hint: `List the account's users with \`crosstab users list --account ${account}\`.` });
      viewer.userId = match.id;
    }
    return { records: await listAudiences(db, viewer, survey), viewer };
  });
  const who = user === undefined ? `shared in account ${account}` : `of ${user} or shared in account ${account}`;
  return { lookup: audienceLookup(records, viewer), hint: `The audiences ${who} for survey ${survey} are: ${records.length === 0 ? 'none' : [...new Set(records.map((record) => `@${record.name}`))].join(', ')}.` };
}

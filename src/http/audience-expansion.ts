/**
 * `@name` in the expressions of a request: each saved audience the caller may use is replaced
 * by its expression in parentheses before the engine sees the text, so the engine's caches are
 * keyed by what the audience says now (an edited audience never answers from a stale cell) and
 * every expression the answer shows is plain text that parses back to the same respondents.
 * Entitlements are those of the expression inside, checked at every use; an audience the
 * caller's groups do not cover is refused without a word of its definition.
 */
import { expandAudiences, isCrosstabError, MAX_AUDIENCE_DEPTH, namesOf, type AudienceDefinition, type CrosstabError, type DatasetInfo } from '../index.js';
import type { AudienceRecord, AudienceStore, AudienceViewer } from '../keys/index.js';
import { mayEdit } from '../keys/index.js';
import type { CrosstabDataset } from './handler-types.js';
import type { ApiKeyRecord } from './key-file.js';
import { fromEngineError, serviceError, statusOf, type ServiceError } from './service-error.js';

/** One expression of a request: its text, the request field it is in, and how a message names it (`TargetCodes[1]`). */
export interface RequestExpression {
  text: string;
  field: string;
  label: string;
}

/** Who an audience is looked up for: undefined for a caller of no account (a key file's key). */
export function audienceViewer(caller: ApiKeyRecord): AudienceViewer | undefined {
  if (caller.accountId === undefined) return undefined;
  return caller.userId === undefined ? { accountId: caller.accountId } : { accountId: caller.accountId, userId: caller.userId };
}

/** The names of the audiences an expression names at its top (syntax errors are left to the engine, which names their position). */
export function topNames(text: string): string[] {
  if (!text.includes('@')) return [];
  const names = new Set<string>();
  try {
    expandAudiences(text, (name) => {
      names.add(name);
      return { id: name, name, expression: '*' };
    });
  } catch (error) {
    if (!isCrosstabError(error)) throw error;
  }
  return [...names];
}

/**
 * The audiences of `survey` the viewer may use that the expressions name, directly or through
 * each other. Those named are read first; when they use others, with the store's closure, all
 * are read again in one statement, and only that read is used (one snapshot: never an audience
 * from before an edit with one from after another edit, an answer no state of the audiences
 * ever gave). The per-level reads below (one query per level, at most MAX_AUDIENCE_DEPTH + 1)
 * are for third-party stores without closure only: the built-in DbAudienceStore (embedded
 * database and PostgreSQL) has it, and test/access/audience-closure.test.ts fails if it is ever
 * read level by level.
 */
async function fetchUsed(store: AudienceStore, viewer: AudienceViewer, survey: string, texts: readonly string[]): Promise<AudienceRecord[]> {
  const named = [...new Set(texts.flatMap(topNames))];
  let found = await store.byNames(viewer, survey, named);
  let wanted = new Set(found.flatMap((audience) => topNames(audience.expression)));
  if (wanted.size === 0) return found;
  if (store.closure !== undefined) return store.closure(viewer, survey, named, MAX_AUDIENCE_DEPTH);
  // A third-party store without closure: level by level, each level its own snapshot.
  const fetched = new Map<string, AudienceRecord[]>();
  for (let level = 0; ; level++) {
    if (level > 0) found = await store.byNames(viewer, survey, [...wanted]);
    const asked = level === 0 ? named : [...wanted];
    for (const name of asked) fetched.set(name, []);
    for (const audience of found) fetched.get(audience.name)?.push(audience);
    wanted = new Set(found.flatMap((audience) => topNames(audience.expression)).filter((name) => !fetched.has(name)));
    if (level >= MAX_AUDIENCE_DEPTH || wanted.size === 0) break;
  }
  return [...fetched.values()].flat();
}

/**
 * The audiences of `survey` the caller may use that `texts` name, directly or through each
 * other, read once (one snapshot) for several expansions: expandRequestAudiences' `read`, e.g.
 * a listing of saved tables. None for a caller of no account.
 */
export async function readUsedAudiences(store: AudienceStore, caller: ApiKeyRecord, survey: string, texts: readonly string[]): Promise<AudienceRecord[]> {
  const viewer = audienceViewer(caller);
  return viewer === undefined ? [] : fetchUsed(store, viewer, survey, texts);
}

/** As readUsedAudiences, for `viewer` (e.g. the user who saved a table another user opens). */
export const readAudiencesFor = (store: AudienceStore, viewer: AudienceViewer, survey: string, texts: readonly string[]): Promise<AudienceRecord[]> => fetchUsed(store, viewer, survey, texts);

/**
 * Which audience `@name` is, seen from `parent`: inside a shared audience only shared ones (it
 * means the same for every caller of the account); elsewhere the viewer's own private one
 * first, then the shared one. A saved table another user opens is checked against its owner's
 * meaning of each name (storedAudiences in the portal), never computed with the viewer's.
 */
export function audienceLookup(audiences: readonly AudienceRecord[], viewer: AudienceViewer): (name: string, parent: AudienceDefinition | undefined) => AudienceRecord | undefined {
  const byId = new Map(audiences.map((audience) => [audience.id, audience]));
  return (name, parent) => {
    const sharedOnly = parent !== undefined && byId.get(parent.id)?.shared === true;
    const candidates = audiences.filter((audience) => audience.name === name);
    const own = sharedOnly ? undefined : candidates.find((audience) => !audience.shared && viewer.userId !== undefined && audience.ownerId === viewer.userId);
    return own ?? candidates.find((audience) => audience.shared);
  };
}

/** The authorization groups the variables and codes an expression names belong to (unknown names: none), without binding it. */
export function namedGroups(info: DatasetInfo, expression: string): string[] {
  const { variables, codes } = namesOf(expression);
  const groups = new Set<string>();
  for (const name of variables) {
    const variable = info.variables.find((candidate) => candidate.name === name);
    if (variable !== undefined) groups.add(variable.group);
  }
  for (const name of codes) {
    const code = info.codes.find((candidate) => candidate.name === name);
    if (code !== undefined) groups.add(code.group);
  }
  return [...groups];
}

/** The refusal of an audience whose expression uses groups the caller may not: it never says what the expression holds. */
export function forbiddenAudience(where: string, name: string, survey: string, field: string): ServiceError {
  return serviceError(
    'forbidden_survey',
    `${where}audience @${name} uses variables outside the authorization groups your key may use in survey ${survey}.`,
    'Ask the audience\'s owner for one within your groups, or ask the provider to extend your key.',
    field,
  );
}

/**
 * The expressions with their audiences expanded, in order, or the refusal: an unknown audience
 * (named, and only among the caller's), a cycle, an audience outside the caller's groups
 * (forbidden_survey, its definition unsaid), or one that no longer fits the survey's data.
 * Expressions without `@` are returned as they are, with no lookup.
 */
export async function expandRequestAudiences(options: {
  store: AudienceStore | undefined;
  caller: ApiKeyRecord;
  dataset: Pick<CrosstabDataset, 'info' | 'groupsOf'>;
  allowedGroups: readonly string[] | undefined;
  expressions: readonly RequestExpression[];
  catalog: string;
  /** The audiences readUsedAudiences read for these expressions (among others): not read again. */
  read?: readonly AudienceRecord[];
}): Promise<string[] | ServiceError> {
  const { store, caller, dataset, allowedGroups, expressions, catalog, read } = options;
  const info = dataset.info;
  const using = expressions.filter((expression) => topNames(expression.text).length > 0);
  if (using.length === 0) return expressions.map((expression) => expression.text);
  const viewer = audienceViewer(caller);
  if (store === undefined || viewer === undefined) {
    const first = using[0] as RequestExpression;
    return serviceError(
      'unknown_audience',
      `${first.label}: @${topNames(first.text)[0] as string} names a saved audience, and ${store === undefined ? 'this service keeps no audiences (it has no accounts database)' : 'this key belongs to no account, which audiences are kept in'}.`,
      'Write the expression itself instead of @name, or use a key of an account.',
      first.field,
    );
  }
  const audiences = read ?? (await fetchUsed(store, viewer, info.survey, using.map((expression) => expression.text)));
  const lookup = audienceLookup(audiences, viewer);
  const checked = new Set<string>();
  const texts: string[] = [];
  for (const expression of expressions) {
    if (!using.includes(expression)) {
      texts.push(expression.text);
      continue;
    }
    const where = `${expression.label}: `;
    let expanded;
    try {
      expanded = expandAudiences(expression.text, lookup);
    } catch (error) {
      if (!isCrosstabError(error)) throw error;
      const loop = error.details.audiences;
      return loop === undefined ? labelled(error, expression, catalog) : { ...labelled(error, expression, catalog), hint: loopHint(loop, audiences, viewer) };
    }
    for (const used of expanded.audiences) {
      if (checked.has(used.audience.id)) continue;
      checked.add(used.audience.id);
      // Checked on the names alone first: binding could name a value of the definition before it reaches a variable outside the groups.
      if (allowedGroups !== undefined && !namedGroups(info, used.audience.expression).every((group) => allowedGroups.includes(group))) {
        return forbiddenAudience(where, used.named, info.survey, expression.field);
      }
      if (dataset.groupsOf === undefined) continue;
      try {
        dataset.groupsOf(used.text, allowedGroups);
      } catch (error) {
        if (!isCrosstabError(error)) throw error;
        if (error.code === 'forbidden_group') return forbiddenAudience(where, used.named, info.survey, expression.field);
        const mapped = fromEngineError(error, catalog, info.survey);
        // The server's state (a dataset closed under the request, its data unusable), not the audience: answered as any request is, naming no file.
        if (statusOf(mapped) >= 500) return mapped;
        const named = used.named === used.audience.name ? `@${used.named}` : `@${used.named} (through @${used.audience.name})`;
        return { ...mapped, message: `${where}audience ${named} no longer fits survey ${info.survey}: ${error.details.problem ?? error.message}`, hint: `${mapped.hint} Edit the audience (PUT /v1/audiences/${used.audience.id}).`, field: expression.field };
      }
    }
    texts.push(expanded.text);
  }
  return texts;
}

/**
 * How to undo a loop of audiences (saved by two saves at once before saves were checked under
 * the account's lock): where to edit or delete those of them the viewer may, or whom to ask.
 */
function loopHint(loop: readonly string[], audiences: readonly AudienceRecord[], viewer: AudienceViewer): string {
  const members = loop.flatMap((id) => audiences.filter((audience) => audience.id === id));
  const first = `@${members[0]?.name ?? ''}`;
  const editable = members.filter((audience) => mayEdit(viewer, audience));
  if (editable.length === 0) {
    const owners = [...new Set(members.map((audience) => audience.owner ?? 'the account'))];
    return `Only their owners (${owners.join(', ')}) can edit these audiences: ask them to change one so that none of them uses ${first}.`;
  }
  const paths = editable.map((audience) => `/v1/audiences/${audience.id} (@${audience.name})`);
  return `Edit one of these audiences so that none of them uses ${first}: PUT ${paths.join(' or ')} with another Expression, or DELETE one of them.`;
}

function labelled(error: CrosstabError, expression: RequestExpression, catalog: string): ServiceError {
  const mapped = fromEngineError(error, catalog);
  return { ...mapped, message: `${expression.label}: ${error.details.problem ?? error.message}`, field: expression.field };
}

/**
 * The Tables page's actions. A table is computed by the API's own POST /tables, called
 * in-process as the signed-in user's account (its licences and groups, its rate limit and
 * quota): the same code computes it and writes the one usage row of the call.
 */
import { checkSavedResultSize, checkSavedTableRoom, DEFAULT_SAVED_TABLE_LIMITS, type DbKeyStore, deleteSavedTable, listSavedTables, ownTableNamed, renameSavedTable, savedTable, saveTable, setSavedTableShared, storeSavedResult, updateSavedTable, type Database, type SavedTable, type SavedTableLimits } from '../access/index.js';
import { ErrorCode, isCrosstabError, type TableJson } from '../index.js';
import type { ApiKeyRecord, HandlerResponse } from '../http/index.js';
import { callerGroups, type CatalogDataset } from '../http/survey-catalog.js';
import { expandRequestAudiences, readAudiencesFor, readUsedAudiences, topNames } from '../http/audience-expansion.js';
import { BILLED, type BilledResponse } from '../http/billed-delivery.js';
import type { AudienceRecord } from '../keys/index.js';
import { DbAudienceStore } from '../access/index.js';
import type { PageContext } from './html.js';
import type { PortalRoute, RouteContext } from './routes.js';
import type { Session } from './sessions.js';
import { requestRights, type AccountRights, type RequestRights } from './account-rights.js';
import { axisEntry, emptyForm, expressionsOf, formOf, formOfSpec, parseSpec, specOf, unknownBareName, usableNames, type TableForm, type TableSpec } from './table-spec.js';
import { tablesPage, type TablesView } from './tables-page.js';
import { audienceRefusalText, minuteText, savedListNote, staleResultText, storedAudiences, type StoredAudiences, type TableAudienceReads, type TableOwner } from './saved-audiences.js';

/** Formats a table can be answered in. */
export type TableFormat = 'json' | 'csv' | 'xlsx' | 'pptx';
/** Runs POST /tables of the API as `caller`: its answer as the API sends it. */
/** `signal`: the page's request; aborted when its client has gone (the table stops, nothing is billed). */
export type TableCompute = (caller: ApiKeyRecord, spec: TableSpec, format: TableFormat, signal?: AbortSignal) => Promise<HandlerResponse & { body: string | Uint8Array }>;

/** Runs POST /tabbooks of the API as `caller` (an XLSX workbook, or the API's error). */
export type TabbookCompute = (caller: ApiKeyRecord, body: Record<string, unknown>, signal?: AbortSignal) => Promise<HandlerResponse & { body: string | Uint8Array }>;

export interface TablesDependencies {
  db: Database;
  /** The API's key store: told the account's limits before a table is computed for it. */
  keys: DbKeyStore;
  surveys: readonly CatalogDataset[];
  /** The API's POST /tables (set when the portal is mounted beside the API). */
  compute(): TableCompute | undefined;
  /** The API's POST /tabbooks (set when the portal is mounted beside the API). */
  tabbook?(): TabbookCompute | undefined;
  context(title: string, session: Session): PageContext;
  /** The page (its Content-Security-Policy lets its script fetch from the same origin). */
  page(status: number, body: string): HandlerResponse;
  file(contentType: string, filename: string, body: string | Uint8Array): HandlerResponse;
  json(status: number, value: unknown): HandlerResponse;
  redirect(location: string): HandlerResponse;
  base: string;
  /** Bounds of the saved tables (default DEFAULT_SAVED_TABLE_LIMITS). */
  savedTables?: Partial<SavedTableLimits>;
}

const FORMAT_TYPES: Readonly<Record<TableFormat, string>> = { json: 'application/json', csv: 'text/csv', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' };
export const tableAccept = (format: TableFormat): string => FORMAT_TYPES[format];

/** The API's field names as the form labels them. */
const FIELDS: ReadonlyArray<[RegExp, NonNullable<TablesView['error']>['field'], (match: RegExpExecArray) => string]> = [
  [/^PopulationBaseCode\b/, 'base', () => 'Base'],
  [/^Rows(?:\[(\d+)\])?/, 'rows', (m) => (m[1] === undefined ? 'Rows' : `Rows, line ${Number(m[1]) + 1}`)],
  [/^Columns(?:\[(\d+)\])?/, 'columns', (m) => (m[1] === undefined ? 'Columns' : `Columns, line ${Number(m[1]) + 1}`)],
  [/^Weight\b/, 'weight', () => 'Weight'],
  [/^Statistics\b/, 'statistics', () => 'Statistics'],
  [/^SurveyCode\b/, 'survey', () => 'Survey'],
];

/** An error answer of POST /tables as the form shows it: its field named by the form's label. */
export function formError(answer: { body: string | Uint8Array }): NonNullable<TablesView['error']> {
  let detail: { message?: string; hint?: string; field?: string } = {};
  try {
    detail = (JSON.parse(typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body).toString('utf8')) as { error?: typeof detail }).error ?? {};
  } catch {
    // not JSON: the generic message below
  }
  let message = detail.message ?? 'The table could not be computed.';
  let field: NonNullable<TablesView['error']>['field'];
  for (const [pattern, name, label] of FIELDS) {
    const match = pattern.exec(message);
    const named = detail.field !== undefined && pattern.test(detail.field);
    if (match !== null) message = `${label(match)}${message.slice(match[0].length)}`;
    if (match !== null || named) {
      field = name;
      break;
    }
  }
  const text = detail.hint ? `${message} ${detail.hint}` : message;
  return field === undefined ? { message: text } : { message: text, field };
}

export function tablesRoutes(deps: TablesDependencies): PortalRoute[] {
  const { db, base } = deps;
  const limits: SavedTableLimits = { ...DEFAULT_SAVED_TABLE_LIMITS, ...deps.savedTables };
  /** A refusal by the saved tables' bounds (the message names the limit), or undefined for any other error. */
  const limitRefusal = (error: unknown): string | undefined => (isCrosstabError(error) && error.code === ErrorCode.invalidOption && (String(error.details.field ?? '').startsWith('savedTables.') || error.details.field === 'tableName') ? `${error.message} ${error.details.hint ?? ''}`.trim() : undefined);
  type SignedIn = RouteContext & { session: Session };
  const owner = (session: Session) => ({ accountId: session.accountId, userId: session.userId });
  const audiences = new DbAudienceStore(db);

  type Rights = AccountRights;
  const rightsOnce = (session: Session): RequestRights => requestRights(db, deps.keys, deps.surveys, session);

  /**
   * The audiences `texts` (expressions of `table`, a saved table) use, read for its owner and for
   * the signed-in user: one read when they are one user. `read`: the user's, read already.
   */
  async function tableReads(session: Session, caller: ApiKeyRecord, table: TableOwner, survey: string, texts: readonly string[], read?: AudienceRecord[]): Promise<TableAudienceReads> {
    const viewer = read ?? (texts.length === 0 ? [] : await readUsedAudiences(audiences, caller, survey, texts));
    const owner = table.userId === session.userId || texts.length === 0 ? viewer : await readAudiencesFor(audiences, { accountId: table.accountId, userId: table.userId }, survey, texts);
    return { owner, viewer };
  }
  const viewerOf = (session: Session) => ({ accountId: session.accountId, userId: session.userId });

  /**
   * A computation from the form of a saved table another user saved (`opened`): refused when
   * an `@name` of the table the form still uses means another audience for the signed-in user
   * than for the table's owner (their figures would be shown as the table's). Undefined when
   * nothing is refused.
   */
  async function openedAudiences(session: Session, caller: ApiKeyRecord, opened: SavedTable | undefined, survey: string, texts: readonly string[]): Promise<StoredAudiences | undefined> {
    if (opened === undefined || opened.userId === session.userId) return undefined;
    const spec = parseSpec(opened.spec);
    const tableNames = new Set(spec === undefined || spec.SurveyCode !== survey ? [] : expressionsOf(spec).flatMap(topNames));
    const names = [...new Set(texts.flatMap(topNames))].filter((name) => tableNames.has(name)).map((name) => `@${name}`);
    if (names.length === 0) return undefined;
    const stored = storedAudiences(names, await tableReads(session, caller, opened, survey, names), opened, viewerOf(session), null);
    return stored.problem === undefined ? undefined : stored;
  }

  async function view(session: Session, rightsNow: RequestRights, form: TableForm, extra: Partial<TablesView>, status = 200): Promise<HandlerResponse> {
    const rights = await rightsNow();
    const { catalog } = rights;
    const dataset = deps.surveys.find((candidate) => candidate.info.survey === form.survey && catalog.surveys.some((survey) => survey.SurveyCode === form.survey));
    const groups = dataset === undefined ? [] : (callerGroups(rights.caller, dataset.info) ?? []);
    const variables = dataset === undefined ? [] : dataset.info.variables.filter((variable) => groups.includes(variable.group)).map((variable) => ({ name: variable.name, ...(variable.label === undefined ? {} : { label: variable.label }), ...(variable.values === undefined ? {} : { values: variable.values.map((value) => ({ value: value.value, ...(value.label === undefined ? {} : { label: value.label }) })) }) }));
    const codes = dataset === undefined ? [] : dataset.info.codes.filter((code) => groups.includes(code.group)).map((code) => ({ name: code.name, ...(code.label === undefined ? {} : { label: code.label }) }));
    const saved = await listSavedTables(db, owner(session));
    // A saved table whose survey or variables the account may no longer use is listed without its spec.
    const specs = saved.map((entry) => parseSpec(entry.spec));
    // The audiences the listed tables use are read once per survey, not once per table.
    const read = new Map<string, AudienceRecord[]>();
    for (const survey of new Set(specs.flatMap((spec) => (spec === undefined ? [] : [spec.SurveyCode])))) {
      const texts = specs.flatMap((spec) => (spec?.SurveyCode === survey ? expressionsOf(spec) : [])).filter((text) => text.includes('@'));
      if (texts.length > 0) read.set(survey, await readUsedAudiences(audiences, rights.caller, survey, texts));
    }
    const usable = await Promise.all(specs.map(async (spec) => spec !== undefined && (await entitledTo(rights, spec, read.get(spec.SurveyCode)))));
    const unusable = new Set(saved.filter((_, i) => !usable[i]).map((entry) => entry.id));
    // The tables of other users: their audiences as their owners read them, once per survey and owner.
    const ownersRead = new Map<string, AudienceRecord[]>();
    const notes = new Map<string, string>();
    for (const [i, entry] of saved.entries()) {
      const spec = specs[i];
      const texts = spec === undefined ? [] : expressionsOf(spec).filter((text) => text.includes('@'));
      if (spec === undefined || texts.length === 0) continue;
      const key = `${spec.SurveyCode}\n${entry.userId}`;
      if (entry.userId !== session.userId && !ownersRead.has(key)) {
        const ownerTexts = saved.flatMap((other, j) => (other.userId === entry.userId && specs[j]?.SurveyCode === spec.SurveyCode ? expressionsOf(specs[j]!) : [])).filter((text) => text.includes('@'));
        ownersRead.set(key, await readAudiencesFor(audiences, { accountId: entry.accountId, userId: entry.userId }, spec.SurveyCode, ownerTexts));
      }
      const viewerRead = read.get(spec.SurveyCode) ?? [];
      const stored = storedAudiences(texts, { viewer: viewerRead, owner: ownersRead.get(key) ?? viewerRead }, entry, viewerOf(session), entry.computedAt);
      const note = savedListNote(stored);
      if (note !== undefined) notes.set(entry.id, note);
    }
    const surveyName = dataset === undefined ? {} : { surveyName: dataset.info.name === dataset.info.survey ? dataset.info.name : `${dataset.info.name} (${dataset.info.survey})` };
    const tables: TablesView = { form, surveys: catalog.surveys, ...surveyName, weights: dataset?.info.weights ?? [], variables, codes, saved, unusable, notes, viewerId: session.userId, ...extra };
    return deps.page(status, tablesPage(deps.context('Tables', session), tables));
  }

  /** The table of `spec` as JSON, or the form's error; billed by the API when it is a 200. */
  async function computeTable(rightsNow: RequestRights, spec: TableSpec, format: TableFormat, signal?: AbortSignal): Promise<{ answer: HandlerResponse & { body: string | Uint8Array } } | { error: NonNullable<TablesView['error']>; status: number }> {
    const compute = deps.compute();
    if (compute === undefined) return { error: { message: 'Tables cannot be computed here: the portal is not mounted beside the API.' }, status: 503 };
    const { caller } = await rightsNow();
    const answer = await compute(caller, spec, format, signal);
    if (answer.status !== 200) return { error: formError(answer), status: answer.status };
    return { answer };
  }

  /**
   * `response` (the page or the file that hands the API's `answer` to the user) carrying the
   * answer's billing: the server voids its usage record when `response` is not delivered, as
   * it does for the API's own answers.
   */
  const delivering = (answer: HandlerResponse, response: HandlerResponse): HandlerResponse => {
    const billed = (answer as BilledResponse)[BILLED];
    if (billed !== undefined) (response as BilledResponse)[BILLED] = billed;
    return response;
  };

  const tableOf = (body: string | Uint8Array): TableJson => (JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8')) as { Table: TableJson }).Table;
  const now = (): string => new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

  async function post({ session, form: fields, request }: SignedIn & { form: URLSearchParams }): Promise<HandlerResponse> {
    const form = formOf(fields);
    const rights = rightsOnce(session);
    const action = fields.get('action') ?? 'compute';
    // The base goes to the Audiences page's form: nothing is computed or billed.
    if (action === 'audience') return deps.redirect(`${base}/audiences?${new URLSearchParams({ survey: form.survey, expression: form.base }).toString()}#audience-form`);
    // Its spec and owner only: its stored result is not read (0 bytes).
    const opened = fields.get('saved') ? await savedTable(db, owner(session), fields.get('saved') as string, 0) : undefined;
    const again = (error: NonNullable<TablesView['error']>, status: number) => view(session, rights, form, { error, ...(opened ? { openedFrom: opened } : {}) }, status >= 500 ? status : status === 200 ? 400 : status);
    if (form.rows.trim() === '' || form.columns.trim() === '') return again({ message: `${form.rows.trim() === '' ? 'Rows' : 'Columns'} must have at least one line: a variable or an expression.`, field: form.rows.trim() === '' ? 'rows' : 'columns' }, 400);
    const tableName = (fields.get('tableName') ?? '').trim();
    if (action === 'save' && (tableName === '' || tableName.length > 120)) return again({ message: 'Save as: give the table a name of 1 to 120 characters. Nothing was computed or billed.' }, 400);
    // Saving a reopened table of one's own under its name updates it; any other name a user already gave a table of theirs is refused (no silent duplicate).
    let updating: string | undefined;
    if (action === 'save') {
      const sameName = opened !== undefined && opened.name.toLowerCase() === tableName.toLowerCase();
      if (sameName && opened.userId !== session.userId) {
        return again({ message: `${opened.name} is ${opened.owner}'s table: only they can update it. Save it under another name to keep a copy of your own. Nothing was computed or billed.` }, 403);
      }
      if (sameName) updating = opened.id;
      else if ((await ownTableNamed(db, owner(session), tableName)) !== undefined) {
        return again({ message: `You already have a saved table named ${tableName}: open it and save to update it, or choose another name. Nothing was computed or billed.` }, 409);
      }
      // Refused before the table is computed: nothing is billed for a save that has no room.
      if (updating === undefined) {
        try {
          await checkSavedTableRoom(db, owner(session), limits);
        } catch (error) {
          const refused = limitRefusal(error);
          if (refused === undefined) throw error;
          return again({ message: `${refused} Nothing was computed or billed.` }, 409);
        }
      }
    }
    const dataset = deps.surveys.find((candidate) => candidate.info.survey === form.survey);
    const groups = dataset === undefined ? [] : (callerGroups((await rights()).caller, dataset.info) ?? []);
    const spec = specOf(form, dataset, groups);
    // A bare name that is no variable or code of the user's groups: "unknown variable", before anything is computed or billed.
    if (dataset !== undefined) {
      const names = usableNames(dataset, groups);
      const bare = (['Rows', 'Columns'] as const).flatMap((axis) => spec[axis].flatMap((item, i) => ('Expression' in item ? [{ axis, i, problem: unknownBareName(item.Expression, names) }] : [])));
      const baseProblem = unknownBareName(spec.PopulationBaseCode, names);
      if (baseProblem !== undefined) return again({ message: `Base: ${baseProblem}`, field: 'base' }, 400);
      const found = bare.find((entry) => entry.problem !== undefined);
      if (found !== undefined) return again({ message: `${found.axis}, line ${found.i + 1}: ${found.problem}`, field: found.axis === 'Rows' ? 'rows' : 'columns' }, 400);
    }
    const refused = await openedAudiences(session, (await rights()).caller, opened, spec.SurveyCode, expressionsOf(spec));
    if (refused !== undefined) return again({ message: `${opened?.name} uses saved audiences that cannot be used by you now (${refused.problem}): nothing was computed or billed. Rename or share the audience it names, or write its expression instead of @name.` }, 403);
    const format: TableFormat = action === 'csv' || action === 'xlsx' || action === 'pptx' ? action : 'json';
    const computed = await computeTable(rights, spec, format, request.signal);
    if ('error' in computed) return again(computed.error, computed.status);
    const { answer } = computed;
    if (format !== 'json') return delivering(answer, deps.file(answer.headers['content-type'] ?? FORMAT_TYPES[format], `table-${spec.SurveyCode}.${format}`, answer.body));
    const table = tableOf(answer.body);
    const specText = JSON.stringify(spec);
    const shown = { result: { table, computedAt: now(), billed: true }, ...(opened ? { openedFrom: opened } : {}) };
    try {
      if (action === 'save' && updating !== undefined) {
        const shared = fields.get('shared') === '1';
        if (!(await updateSavedTable(db, owner(session), updating, { spec: specText, result: JSON.stringify(table), shared }, limits))) return again({ message: 'That saved table is gone (deleted meanwhile): save it under a name again.' }, 404);
        return deps.redirect(`${base}/tables/saved/${updating}?done=updated`);
      }
      if (action === 'save') {
        const saved = await saveTable(db, owner(session), { name: tableName, spec: specText, result: JSON.stringify(table), shared: fields.get('shared') === '1' }, limits);
        return deps.redirect(`${base}/tables/saved/${saved.id}?done=saved`);
      }
      // Computing a reopened table of one's own with its spec unchanged refreshes its stored result (a shared table of another user's is only shown).
      if (opened !== undefined && opened.userId === session.userId && opened.spec === specText) {
        checkSavedResultSize(JSON.stringify(table), limits);
        await storeSavedResult(db, owner(session), opened.id, JSON.stringify(table), limits);
      }
    } catch (error) {
      const refused = limitRefusal(error);
      if (refused === undefined) throw error;
      // The table was computed and billed: it is shown, but not stored.
      return delivering(answer, await view(session, rights, form, { ...shown, error: { message: `Not saved: ${refused}` } }, 409));
    }
    return delivering(answer, await view(session, rights, form, shown));
  }

  /**
   * Whether the account may still use everything the spec names: its survey, and the variables
   * and codes of its base and entries, with the saved audiences they use expanded as a table
   * computed now would expand them (an audience gone, or using a group lost, is not usable);
   * `read`: the audiences readUsedAudiences read for this spec's expressions, when it was.
   */
  async function entitledTo({ caller, catalog }: Rights, spec: TableSpec, read?: readonly AudienceRecord[]): Promise<boolean> {
    const dataset = catalog.surveys.some((survey) => survey.SurveyCode === spec.SurveyCode) ? deps.surveys.find((candidate) => candidate.info.survey === spec.SurveyCode) : undefined;
    if (dataset === undefined) return false;
    const groups = callerGroups(caller, dataset.info) ?? [];
    if (groups.length === 0 || dataset.groupsOf === undefined) return groups.length > 0;
    const expressions = expressionsOf(spec);
    let texts = expressions;
    if (expressions.some((text) => text.includes('@'))) {
      const expanded = await expandRequestAudiences({ store: audiences, caller, dataset, allowedGroups: groups, expressions: expressions.map((text) => ({ text, field: 'expression', label: 'Expression' })), catalog: '', ...(read === undefined ? {} : { read }) });
      if (!Array.isArray(expanded)) return false;
      texts = expanded;
    }
    try {
      for (const item of [...spec.Rows, ...spec.Columns]) {
        if ('Variable' in item && !dataset.info.variables.some((variable) => variable.name === item.Variable && groups.includes(variable.group))) return false;
      }
      for (const text of texts) dataset.groupsOf(text, groups);
      return true;
    } catch (error) {
      if (!isCrosstabError(error)) throw error;
      return false;
    }
  }

  async function openSaved({ session, params, query }: SignedIn): Promise<HandlerResponse> {
    // Only this table's result is read, and only up to the size a saved table may store.
    const rights = rightsOnce(session);
    const saved = await savedTable(db, owner(session), params[0] as string, limits.resultBytes);
    if (saved === undefined) return view(session, rights, emptyForm(''), { error: { message: 'No such saved table in your account (or it is not shared with you).' } }, 404);
    const spec = parseSpec(saved.spec);
    if (spec === undefined) return view(session, rights, emptyForm(''), { error: { message: `The saved table ${saved.name} cannot be read.` } }, 500);
    // The audiences the spec uses, read once: for the check below and to compare with when the result was computed.
    const account = await rights();
    const texts = expressionsOf(spec).filter((text) => text.includes('@'));
    const reads = await tableReads(session, account.caller, saved, spec.SurveyCode, texts);
    const stored = storedAudiences(texts, reads, saved, viewerOf(session), saved.computedAt);
    const refuse = (message: string) => view(session, rights, emptyForm(account.catalog.surveys[0]?.SurveyCode ?? ''), { error: { message } }, 403);
    // An audience gone, or an @name that is another audience for this user than for the owner: neither its result nor its spec is shown.
    if (stored.problem !== undefined) return refuse(audienceRefusalText(saved.name, stored));
    // Whether the account may still use everything the spec uses (its survey, variables, codes): a saved result is shown only then.
    if (!(await entitledTo(account, spec, reads.viewer))) return refuse(`The saved table ${saved.name} uses a survey or variables your account may no longer use: it cannot be opened. Its owner can delete it.`);
    const tooLarge = saved.result === null && saved.resultBytes > 0;
    const stale = saved.computedAt === null ? undefined : staleResultText(stored, saved.computedAt);
    const result = saved.result === null ? undefined : { table: JSON.parse(saved.result) as TableJson, computedAt: minuteText(saved.computedAt ?? ''), billed: false, saved, ...(stale === undefined ? {} : { stale }) };
    const notice = tooLarge ? { error: { message: `The stored result of ${saved.name} is ${(saved.resultBytes / 1024 / 1024).toFixed(1)} MB, more than a saved table may store now (${(limits.resultBytes / 1024 / 1024).toFixed(1)} MB): it is not shown. Compute a smaller table.` } } : {};
    return view(session, rights, formOfSpec(spec), { openedFrom: saved, ...(result ? { result } : {}), ...notice, ...(query.get('done') === 'saved' ? { success: `Saved as ${saved.name}${saved.shared ? ', shared with your account' : ''}.` } : query.get('done') === 'updated' ? { success: `Updated ${saved.name}${saved.shared ? ', shared with your account' : ''}.` } : query.get('done') === 'renamed' ? { success: `Renamed to ${saved.name}.` } : {}) });
  }

  async function savedAction({ session, params, form }: SignedIn): Promise<HandlerResponse> {
    const [id = '', verb] = params;
    const rights = rightsOnce(session);
    const refused = async (message: string, status: number) => view(session, rights, emptyForm((await rights()).catalog.surveys[0]?.SurveyCode ?? ''), { error: { message } }, status);
    if (verb === 'rename') {
      let renamed: boolean;
      try {
        renamed = await renameSavedTable(db, owner(session), id, form?.get('tableName') ?? '');
      } catch (error) {
        if (!isCrosstabError(error) || error.code !== ErrorCode.invalidOption) throw error;
        const message = error.details.field === 'tableName' && error.details.hint === undefined ? `New name: ${error.details.problem ?? error.message}` : `${error.message} ${error.details.hint ?? ''}`.trim();
        return refused(message, 400);
      }
      if (!renamed) return refused('Only the user who saved a table can rename it.', 403);
      return deps.redirect(`${base}/tables/saved/${id}?done=renamed`);
    }
    const done = verb === 'delete' ? await deleteSavedTable(db, owner(session), id) : await setSavedTableShared(db, owner(session), id, verb === 'share');
    if (!done) return refused('Only the user who saved a table can share, stop sharing or delete it.', 403);
    return deps.redirect(`${base}/tables`);
  }

  /**
   * The check the page's script runs as an expression is typed: the engine's own message, as
   * a query with the account's groups gives it (another group's names are unknown names, and
   * no message or suggestion names anything of another group). Each check is a call of the
   * account's rate limit (not billed): 429 with Retry-After when it is used up.
   */
  async function check({ session, query }: SignedIn): Promise<HandlerResponse> {
    let expression = (query.get('expression') ?? '').trim();
    const { caller, catalog } = await rightsOnce(session)();
    const refusal = await deps.keys.admit(caller, { billed: false });
    if (refusal !== undefined) {
      const answer = deps.json(429, { valid: false, message: `${refusal.message} Try again in ${refusal.retryAfterSeconds} s.` });
      return { ...answer, headers: { ...answer.headers, 'retry-after': String(refusal.retryAfterSeconds) } };
    }
    const survey = query.get('survey') ?? '';
    const dataset = catalog.surveys.some((entry) => entry.SurveyCode === survey) ? deps.surveys.find((candidate) => candidate.info.survey === survey) : undefined;
    if (dataset === undefined) return deps.json(404, { valid: false, message: `Your account has no survey ${survey.slice(0, 60)}.` });
    if (expression === '') return deps.json(200, { valid: false, message: 'Empty: type an expression.' });
    const groups = callerGroups(caller, dataset.info) ?? [];
    const variable = dataset.info.variables.find((candidate) => candidate.name === expression && groups.includes(candidate.group));
    if (variable !== undefined && query.get('kind') === 'axis') return deps.json(200, { valid: true, message: `Whole variable ${variable.name}: a line per value.` });
    const names = usableNames(dataset, groups);
    let label: string | undefined;
    if (query.get('kind') === 'axis') {
      // `Label = expression`: the expression is checked, the label shown.
      const entry = axisEntry(expression, names);
      if ('Expression' in entry && entry.Label !== undefined) {
        label = entry.Label;
        expression = entry.Expression;
      }
    }
    const bare = unknownBareName(expression, names);
    if (bare !== undefined) return deps.json(200, { valid: false, message: bare });
    if (dataset.groupsOf === undefined) return deps.json(200, { valid: true, message: 'Checked when the table is computed.' });
    if (expression.includes('@')) {
      // Saved audiences as the table will use them: the user's own and the account's shared ones, within the account's groups.
      const expanded = await expandRequestAudiences({ store: audiences, caller, dataset, allowedGroups: groups, expressions: [{ text: expression, field: 'expression', label: 'Expression' }], catalog: '' });
      if (!Array.isArray(expanded)) return deps.json(200, { valid: false, message: expanded.message.replace(/^Expression: /, '') });
      if (expanded[0] !== expression) return deps.json(200, { valid: true, message: 'Valid expression (with its saved audiences).' });
      expression = expanded[0] as string;
    }
    try {
      dataset.groupsOf(expression, groups);
      return deps.json(200, { valid: true, message: label === undefined ? 'Valid expression.' : `Valid expression, labelled ${label}.` });
    } catch (error) {
      if (!isCrosstabError(error)) throw error;
      return deps.json(200, { valid: false, message: error.message });
    }
  }

  /**
   * The tab book of the form: Banner and Stubs (one per line, or "all"), with the form's
   * survey, base, weight, statistics and missing answers; the XLSX POST /tabbooks answers,
   * billed there once (operation tabbook).
   */
  async function tabbookPost({ session, form: fields, request }: SignedIn & { form: URLSearchParams }): Promise<HandlerResponse> {
    const form = formOf(fields);
    const banner = lines(fields.get('banner') ?? '');
    const stubsText = (fields.get('stubs') ?? '').trim();
    const compute = deps.tabbook?.();
    const rights = rightsOnce(session);
    const again = (message: string, status: number) => view(session, rights, form, { error: { message } }, status);
    if (compute === undefined) return again('Tab books cannot be made here: the portal is not mounted beside the API.', 503);
    if (banner.length === 0 || stubsText === '') return again(`Tab book: ${banner.length === 0 ? 'Banner' : 'Stubs'} must have at least one line${banner.length === 0 ? '' : ' (or "all")'}. Nothing was computed or billed.`, 400);
    const spec = specOf(form, undefined, []);
    const body: Record<string, unknown> = { SurveyCode: form.survey, PopulationBaseCode: spec.PopulationBaseCode || '*', Banner: banner, Stubs: stubsText === 'all' ? 'all' : lines(stubsText), Statistics: spec.Statistics, Missing: form.missing, ...('Weight' in spec ? { Weight: spec.Weight } : {}) };
    const { caller } = await rights();
    // A tab book from the form of another user's saved table: its @names as for a table computed from it.
    const opened = fields.get('saved') ? await savedTable(db, owner(session), fields.get('saved') as string, 0) : undefined;
    const refused = await openedAudiences(session, caller, opened, form.survey, [String(body['PopulationBaseCode']), ...banner]);
    if (refused !== undefined) return again(`Tab book: ${opened?.name} uses saved audiences that cannot be used by you now (${refused.problem}): nothing was computed or billed. Rename or share the audience it names, or write its expression instead of @name.`, 403);
    const answer = await compute(caller, body, request.signal);
    if (answer.status !== 200) {
      const error = formError(answer);
      return again(`Tab book: ${error.message.replace(/^Stubs\[(\d+)\]/, (_m, i: string) => `Stubs, line ${Number(i) + 1}`).replace(/^Banner\[(\d+)\]/, (_m, i: string) => `Banner, line ${Number(i) + 1}`)}`, answer.status >= 500 ? answer.status : answer.status === 429 ? 429 : 400);
    }
    return delivering(answer, deps.file(answer.headers['content-type'] ?? FORMAT_TYPES.xlsx, `tabbook-${form.survey}.xlsx`, answer.body));
  }
  const lines = (text: string): string[] => text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');

  const signedIn = (handle: (context: SignedIn) => Promise<HandlerResponse>) => (context: RouteContext) => handle(context as SignedIn);
  return [
    { method: 'POST', path: '/tables/tabbook', access: 'account', handle: (context) => tabbookPost(context as SignedIn & { form: URLSearchParams }) },
    {
      method: 'GET', path: '/tables', access: 'account',
      handle: signedIn(async ({ session, query }) => {
        const rights = rightsOnce(session);
        const { catalog } = await rights();
        const chosen = catalog.surveys.find((survey) => survey.SurveyCode === query.get('survey')) ?? catalog.surveys[0];
        return view(session, rights, emptyForm(chosen?.SurveyCode ?? ''), {});
      }),
    },
    { method: 'POST', path: '/tables', access: 'account', handle: (context) => post(context as SignedIn & { form: URLSearchParams }) },
    { method: 'GET', path: '/tables/check', access: 'account', handle: signedIn(check) },
    { method: 'GET', path: /^\/tables\/saved\/(tbl_[0-9a-f]{16})$/, access: 'account', handle: signedIn(openSaved) },
    { method: 'POST', path: /^\/tables\/saved\/(tbl_[0-9a-f]{16})\/(share|unshare|delete|rename)$/, access: 'account', handle: (context) => savedAction(context as SignedIn) },
  ];
}

export type { SavedTable };

/**
 * The audiences operations: save an expression of a survey under a name (`@name` in every
 * expression of the account's callers afterwards), list, read, edit and delete them. Never
 * billed; counted against the account's rate limit. An audience is saved only when the caller
 * could use it: its survey served and licensed, its expression valid for the survey and within
 * the caller's authorization groups, its audiences there for the caller and free of cycles.
 */
import { AUDIENCE_NAME, expandAudiences, isCrosstabError } from '../index.js';
import type { AudienceCheck, AudienceInput, AudienceRecord, AudienceStore, AudienceViewer } from '../keys/index.js';
import { mayEdit } from '../keys/index.js';
import { audienceLookup, audienceViewer, forbiddenAudience, namedGroups, topNames } from './audience-expansion.js';
import { authorize, entitledToSurvey } from './auth.js';
import { MAX_EXPRESSION_LENGTH, MAX_NAME_LENGTH } from './crosstab-request.js';
import type { CrosstabDataset } from './handler-types.js';
import type { OperationReply } from './operation-reply.js';
import type { AuthenticatedContext, RouteResult } from './route.js';
import { fromEngineError, isServiceError, quote, serviceError, type ServiceError } from './service-error.js';
import { callerGroups } from './survey-catalog.js';

/** Longest label of an audience. */
export const MAX_AUDIENCE_LABEL = 200;
const FIELDS = ['SurveyCode', 'Name', 'Expression', 'Label', 'Shared'] as const;
const HINT = 'Send e.g. {"SurveyCode":"GSS","Name":"women-25-40","Expression":"sex=2 AND age=25..40","Label":"Women 25-40","Shared":true}.';
const NAME_RULE = '1 to 64 lower-case letters, digits, "-" and "_", starting with a letter or digit (used as @name)';

/** An audience as the API shows it. */
export interface AudienceJson {
  AudienceId: string;
  SurveyCode: string;
  Name: string;
  /** How an expression refers to it: `@` and its name. */
  Reference: string;
  /** Its expression; null when it, or an audience it uses, uses variables outside the caller's authorization groups. */
  Expression: string | null;
  Label: string | null;
  Shared: boolean;
  /** The e-mail of the user who saved it; null when it belongs to the account (saved by a key of no user). */
  Owner: string | null;
  /** Whether the caller may edit and delete it. */
  Editable: boolean;
  /** Whether its variables, and those of the audiences it uses, are all within the caller's authorization groups, and those audiences are there without a loop (else using it is refused). */
  Usable: boolean;
  CreatedAt: string;
  UpdatedAt: string;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const invalid = (field: string, message: string, hint = HINT): ServiceError => serviceError('invalid_request', message, hint, field);
const json = (status: number, value: unknown): OperationReply => ({ status, headers: {}, body: JSON.stringify(value) });

/** The caller as a viewer of its account's audiences, or the refusal of a store-less service or an account-less caller. */
function viewerOf(context: AuthenticatedContext): { store: AudienceStore; viewer: AudienceViewer } | ServiceError {
  const store = context.service.audiences;
  if (store === undefined) return serviceError('not_found', 'This service keeps no audiences: it has no accounts database.', 'Write expressions in full, or ask the provider to serve audiences.');
  const viewer = audienceViewer(context.caller);
  if (viewer === undefined) return serviceError('forbidden_survey', 'Audiences are kept per account, and this key belongs to no account.', 'Use a key of an account (made in the portal or with `crosstab keys add`).');
  return { store, viewer };
}

/** `audience` and every audience it reaches through its references (as a use looks them up), each once: a loop or a missing one ends the walk there. */
function reachable(audience: AudienceRecord, lookup: ReturnType<typeof audienceLookup>): AudienceRecord[] {
  const found = new Map([[audience.id, audience]]);
  const waiting = [audience];
  for (let parent = waiting.pop(); parent !== undefined; parent = waiting.pop()) {
    for (const name of topNames(parent.expression)) {
      const used = lookup(name, parent);
      if (used === undefined || found.has(used.id)) continue;
      found.set(used.id, used);
      waiting.push(used);
    }
  }
  return [...found.values()];
}

/**
 * Whether `audience` can be used: every variable and code of it, and of every audience it uses
 * (as the caller would expand it: `others` are the caller's audiences), within the caller's
 * groups of its survey, and its expansion possible (the audiences it uses there, no loop, not
 * too deep); and whether its expression may be shown: all the audiences it reaches are within
 * the groups. One that uses an audience outside the groups is neither; one that uses an
 * audience no longer there, or uses itself, is shown so that its owner can correct it.
 */
function usability(context: AuthenticatedContext, viewer: AudienceViewer, audience: AudienceRecord, others: readonly AudienceRecord[]): { usable: boolean; shown: boolean } {
  const neither = { usable: false, shown: false };
  const dataset = context.service.surveys.get(audience.survey);
  if (dataset === undefined || !entitledToSurvey(context.caller, audience.survey)) return neither;
  const groups = callerGroups(context.caller, dataset.info);
  if (groups === undefined) return neither;
  const within = (expression: string): boolean => namedGroups(dataset.info, expression).every((group) => groups.includes(group));
  try {
    if (!within(audience.expression)) return neither;
    if (!audience.expression.includes('@')) return { usable: true, shown: true };
    const lookup = audienceLookup(
      others.filter((other) => other.survey === audience.survey),
      viewer,
    );
    try {
      // Expanded as a use of the audience expands it: its own references are seen from it.
      const expanded = expandAudiences(audience.expression, (name, parent) => lookup(name, parent ?? audience));
      const all = expanded.audiences.every((used) => within(used.audience.expression));
      return { usable: all, shown: all };
    } catch (error) {
      if (!isCrosstabError(error)) throw error;
      return { usable: false, shown: reachable(audience, lookup).every((used) => within(used.expression)) };
    }
  } catch {
    return neither;
  }
}

/**
 * An audience as the API shows it to `viewer`. `others`: the viewer's audiences of its survey
 * (those it may use), needed when its expression uses audiences; see audienceJsonOf.
 */
export function audienceJson(context: AuthenticatedContext, viewer: AudienceViewer, audience: AudienceRecord, others: readonly AudienceRecord[]): AudienceJson {
  const { usable, shown } = usability(context, viewer, audience, others);
  return {
    AudienceId: audience.id,
    SurveyCode: audience.survey,
    Name: audience.name,
    Reference: `@${audience.name}`,
    Expression: shown ? audience.expression : null,
    Label: audience.label,
    Shared: audience.shared,
    Owner: audience.owner,
    Editable: mayEdit(viewer, audience),
    Usable: usable,
    CreatedAt: audience.createdAt,
    UpdatedAt: audience.updatedAt,
  };
}

/** audienceJson of one audience, reading the viewer's audiences of its survey only when its expression uses audiences. */
async function audienceJsonOf(context: AuthenticatedContext, store: AudienceStore, viewer: AudienceViewer, audience: AudienceRecord): Promise<AudienceJson> {
  return audienceJson(context, viewer, audience, audience.expression.includes('@') ? await store.list(viewer, audience.survey) : []);
}

/** Whether the caller may see audiences of `survey` at all: licensed and served. */
const visibleSurvey = (context: AuthenticatedContext, survey: string): boolean => entitledToSurvey(context.caller, survey) && context.service.surveys.has(survey);

/** The body of POST (every field but Label and Shared required) or PUT (fields left out keep their value). */
function readBody(value: unknown, current: AudienceRecord | undefined): AudienceInput | ServiceError {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid('', `The request body must be a JSON object; got ${typeName(value)}.`);
  const body = value as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!(FIELDS as readonly string[]).includes(key)) return serviceError('invalid_request', `Unknown field ${quote(key, 40)}.`, `Allowed fields: ${FIELDS.join(', ')} (names are case-sensitive).`, key.length > 40 ? undefined : key);
  }
  const survey = body['SurveyCode'] ?? current?.survey;
  if (typeof survey !== 'string' || survey.length === 0 || survey.length > MAX_NAME_LENGTH) return invalid('SurveyCode', survey === undefined ? 'SurveyCode is required.' : `SurveyCode must be a string of 1 to ${MAX_NAME_LENGTH} characters; got ${typeName(survey)}.`);
  if (current !== undefined && survey !== current.survey) return invalid('SurveyCode', `An audience stays in its survey (${current.survey}); got ${quote(survey)}.`, 'Leave SurveyCode out, or save a new audience in the other survey.');
  const name = body['Name'] ?? current?.name;
  if (typeof name !== 'string' || !AUDIENCE_NAME.test(name)) {
    const got = name === undefined ? 'it is missing' : typeof name === 'string' ? `got ${quote(name, 70)}` : `got ${typeName(name)}`;
    const lower = typeof name === 'string' ? name.trim().toLowerCase().replace(/^@/, '').replace(/[^a-z0-9_-]+/g, '-').replace(/^[-_]+/, '').slice(0, 64) : '';
    return invalid('Name', `Name must be ${NAME_RULE}; ${got}.`, AUDIENCE_NAME.test(lower) ? `Use e.g. ${quote(lower, 70)}; the expression grammar reads @${lower} as this audience.` : 'Use e.g. "heavy-streamers"; the expression grammar reads @heavy-streamers as this audience.');
  }
  const expression = body['Expression'] ?? current?.expression;
  if (typeof expression !== 'string' || expression.trim() === '' || expression.length > MAX_EXPRESSION_LENGTH) {
    return invalid('Expression', expression === undefined ? 'Expression is required.' : typeof expression !== 'string' ? `Expression must be a string; got ${typeName(expression)}.` : `Expression must be 1 to ${MAX_EXPRESSION_LENGTH} characters; got ${expression.trim() === '' ? 'none' : expression.length}.`);
  }
  const label = 'Label' in body ? body['Label'] : (current?.label ?? null);
  if (label !== null && (typeof label !== 'string' || label.length > MAX_AUDIENCE_LABEL)) return invalid('Label', `Label must be a string of at most ${MAX_AUDIENCE_LABEL} characters, or null; got ${typeof label === 'string' ? `${label.length} characters` : typeName(label)}.`);
  const shared = body['Shared'] ?? current?.shared ?? false;
  if (typeof shared !== 'boolean') return invalid('Shared', `Shared must be true or false; got ${typeName(shared)}.`);
  return { survey, name, expression, label: label === null || label.trim() === '' ? null : label, shared };
}

/**
 * Whether `input` may be saved (as `id`, or new): its survey served and licensed to the caller,
 * a private audience only for a caller who is a user; then the check against the survey's
 * audiences (as the saved audience will see them): its expression with the audiences it uses
 * within the caller's groups, free of cycles and valid for the survey's data now.
 */
function savable(context: AuthenticatedContext, viewer: AudienceViewer, input: AudienceInput, id: string | undefined): ServiceError | AudienceCheck<ServiceError> {
  const { caller, service } = context;
  if (!entitledToSurvey(caller, input.survey)) return serviceError('forbidden_survey', `This API key is not entitled to survey ${quote(input.survey)}.`, 'Save audiences of the surveys your key licenses (GET /surveys).', 'SurveyCode');
  const dataset = service.surveys.get(input.survey) as CrosstabDataset | undefined;
  if (dataset === undefined) return serviceError('unknown_survey', `No survey ${quote(input.survey)} is served here.`, 'GET /surveys lists the SurveyCodes of your key (they are case-sensitive).', 'SurveyCode');
  const access = authorize(caller, dataset.info, undefined);
  if (isServiceError(access)) return access;
  if (!input.shared && viewer.userId === undefined) {
    return invalid('Shared', 'This key belongs to no user, so it can save shared audiences only (seen by every caller of the account).', 'Send "Shared": true, or use a key made by a user in the portal for private audiences.');
  }
  const saving: AudienceRecord = { id: id ?? 'aud_new', ...input, ownerId: viewer.userId ?? null, owner: null, createdAt: '', updatedAt: '' };
  const catalog = `${service.basePath}/surveys/${encodeURIComponent(input.survey)}`;
  const allowed = access.allowedGroups;
  return (audiences) => {
    const others = audiences.filter((audience) => audience.id !== saving.id);
    let expanded;
    try {
      // `@name` itself is the audience being saved (a name taken twice is the store's 409, checked after this).
      const lookup = audienceLookup([saving, ...others], viewer);
      expanded = expandAudiences(`@${input.name}`, (name, parent) => (parent === undefined ? saving : lookup(name, parent)));
    } catch (error) {
      if (!isCrosstabError(error)) throw error;
      return { ...fromEngineError(error, catalog), message: `Expression: ${error.details.problem ?? error.message}`, field: 'Expression' };
    }
    for (const used of expanded.audiences) {
      if (allowed !== undefined && !namedGroups(dataset.info, used.audience.expression).every((group) => allowed.includes(group))) {
        if (used.audience.id === saving.id) continue;
        return forbiddenAudience('Expression: ', used.audience.name, input.survey, 'Expression');
      }
    }
    try {
      dataset.groupsOf?.(expanded.text, allowed);
    } catch (error) {
      if (!isCrosstabError(error)) throw error;
      return { ...fromEngineError(error, catalog), message: `Expression: ${error.details.problem ?? error.message}`, field: 'Expression' };
    }
    return undefined;
  };
}

/**
 * `input` checked (savable) and written, or the refusal. The check runs before the write, so
 * that a refusal takes no lock (and a store that does not run it still refuses what it finds),
 * and again inside the write, where the store gives it the audiences as they are once no other
 * write of the account can run: two saves at once never commit a loop that neither check saw.
 */
async function checkedSave<Saved>(
  context: AuthenticatedContext,
  store: AudienceStore,
  viewer: AudienceViewer,
  input: AudienceInput,
  id: string | undefined,
  write: (check: AudienceCheck<ServiceError>) => Promise<Saved>,
): Promise<Saved | ServiceError> {
  const check = savable(context, viewer, input, id);
  if (isServiceError(check)) return check;
  return check(await store.list(viewer, input.survey)) ?? write(check);
}

function refusalOf(refusal: { refused: 'conflict' | 'limit'; message: string }): ServiceError {
  return refusal.refused === 'conflict'
    ? serviceError('conflict', refusal.message, 'Choose another Name, or edit the existing audience (PUT /audiences/{AudienceId}).', 'Name')
    : serviceError('invalid_request', refusal.message, 'DELETE /audiences/{AudienceId} the audiences your account no longer uses.');
}

/** POST /audiences */
export async function createAudienceOperation(context: AuthenticatedContext): Promise<RouteResult> {
  const who = viewerOf(context);
  if (isServiceError(who)) return who;
  const input = readBody(context.json, undefined);
  if (isServiceError(input)) return input;
  context.entry.survey = input.survey.slice(0, 64);
  const saved = await checkedSave(context, who.store, who.viewer, input, undefined, (check) => who.store.create(who.viewer, input, check));
  if (isServiceError(saved)) return saved;
  if ('refused' in saved) return refusalOf(saved);
  return { ...json(201, await audienceJsonOf(context, who.store, who.viewer, saved)), headers: { location: `${context.service.basePath}/audiences/${saved.id}` } };
}

/** GET /audiences?SurveyCode= */
export async function listAudiencesOperation(context: AuthenticatedContext): Promise<RouteResult> {
  const who = viewerOf(context);
  if (isServiceError(who)) return who;
  const query = new URLSearchParams(context.request.path.split('?', 2)[1] ?? '');
  const survey = query.get('SurveyCode') ?? undefined;
  if (survey !== undefined) {
    context.entry.survey = survey.slice(0, 64);
    if (!entitledToSurvey(context.caller, survey)) return serviceError('forbidden_survey', `This API key is not entitled to survey ${quote(survey)}.`, 'GET /surveys lists the surveys of your key.', 'SurveyCode');
  }
  const audiences = (await who.store.list(who.viewer, survey)).filter((audience) => visibleSurvey(context, audience.survey));
  return json(200, { Audiences: audiences.map((audience) => audienceJson(context, who.viewer, audience, audiences)), MaxPerAccount: who.store.maxPerAccount });
}

/** The audience of the path if the caller may see it, or 404 (never saying whether another account or user has one). */
async function audienceOfPath(context: AuthenticatedContext, store: AudienceStore, viewer: AudienceViewer): Promise<AudienceRecord | ServiceError> {
  const id = context.params['AudienceId'] ?? '';
  const audience = await store.get(viewer, id);
  if (audience === undefined || !visibleSurvey(context, audience.survey)) {
    return serviceError('not_found', `No audience ${quote(id, 40)} is there for you.`, 'GET /audiences lists the audiences you may use: your own and those shared in your account.', 'AudienceId');
  }
  return audience;
}

/** GET /audiences/{AudienceId} */
export async function getAudienceOperation(context: AuthenticatedContext): Promise<RouteResult> {
  const who = viewerOf(context);
  if (isServiceError(who)) return who;
  const audience = await audienceOfPath(context, who.store, who.viewer);
  if (isServiceError(audience)) return audience;
  return json(200, await audienceJsonOf(context, who.store, who.viewer, audience));
}

const notEditable = (audience: AudienceRecord): ServiceError =>
  serviceError('forbidden_survey', `Only ${audience.owner ?? 'its owner'} can edit or delete @${audience.name}.`, 'Save an audience of your own under another name (POST /audiences).', 'AudienceId');

/** PUT /audiences/{AudienceId} */
export async function updateAudienceOperation(context: AuthenticatedContext): Promise<RouteResult> {
  const who = viewerOf(context);
  if (isServiceError(who)) return who;
  const current = await audienceOfPath(context, who.store, who.viewer);
  if (isServiceError(current)) return current;
  if (!mayEdit(who.viewer, current)) return notEditable(current);
  const input = readBody(context.json, current);
  if (isServiceError(input)) return input;
  context.entry.survey = input.survey.slice(0, 64);
  const saved = await checkedSave(context, who.store, who.viewer, input, current.id, (check) => who.store.update(who.viewer, current.id, input, check));
  if (saved === undefined) return notEditable(current);
  if (isServiceError(saved)) return saved;
  if ('refused' in saved) return refusalOf(saved);
  return json(200, await audienceJsonOf(context, who.store, who.viewer, saved));
}

/** DELETE /audiences/{AudienceId} */
export async function deleteAudienceOperation(context: AuthenticatedContext): Promise<RouteResult> {
  const who = viewerOf(context);
  if (isServiceError(who)) return who;
  const current = await audienceOfPath(context, who.store, who.viewer);
  if (isServiceError(current)) return current;
  if (!mayEdit(who.viewer, current) || !(await who.store.delete(who.viewer, current.id))) return notEditable(current);
  return { status: 204, headers: {}, body: '' };
}

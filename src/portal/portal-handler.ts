import { randomBytes, timingSafeEqual } from 'node:crypto';
import { type SavedTableLimits, accountById, addKey, listKeys, parseExpiry, revokeKey, rotateKey, usageDetail, usageReports, parseUsageRange, type UsageReport, type Database, type DbKeyStore } from '../access/index.js';
import { CrosstabError, ErrorCode, isCrosstabError, labelledMessage } from '../index.js';
import type { HandlerRequest, HandlerResponse, TrustedProxies } from '../http/index.js';
import { clientAddress, forwardedProto, headerOf, proxyTrust } from '../http/index.js';
import { PORTAL_CSS, PORTAL_ICON_SVG, PORTAL_JS } from './assets.js';
import { ApiReferenceCache } from './api-reference-cache.js';
import { html, layout, type PageContext } from './html.js';
import { keysPage, newKeyPage, passwordPage, signInPage, usageCsv, usagePage } from './pages.js';
import { changePassword, SESSION_SECONDS, sessionOf, signIn, signOut, type Session } from './sessions.js';
import { SignInThrottle, type SignInThrottleOptions } from './sign-in-throttle.js';
import { allowedMethods, findRoute, type PortalRoute, type RouteContext } from './routes.js';
import { accountCatalog, surveysPage } from './surveys-page.js';
import type { CatalogDataset } from '../http/survey-catalog.js';
import { tablesRoutes, type TabbookCompute, type TableCompute } from './tables-workbench.js';
import { audiencesRoutes, type AudienceCall } from './audiences-page.js';

export interface PortalOptions {
  db: Database;
  /** The API's key store: told to forget cached keys when the portal revokes one. */
  keys: DbKeyStore;
  /** Mount path (default `/portal`). */
  basePath?: string;
  /** Public URL of the API base (e.g. `http://127.0.0.1:8080/v1`), for the curl example and the docs link. */
  apiUrl: string | (() => string);
  /** Example request body of the curl shown with a new key. */
  exampleBody: string;
  /** Set the Secure cookie attribute (the portal is served over https). Default: when a trusted proxy's X-Forwarded-Proto says https. */
  secureCookies?: boolean;
  /** Failed sign-ins per client address and window before further attempts get 429 (default 20 per 15 minutes). */
  signInThrottle?: SignInThrottleOptions;
  /**
   * The reverse proxies or load balancers in front of the portal (their addresses or CIDR
   * ranges, or true for any peer): from them, X-Forwarded-For gives the address sign-ins are
   * throttled by, and X-Forwarded-Proto the scheme (https: Secure cookies). Default false.
   */
  trustProxy?: TrustedProxies;
  /** The served surveys: the Surveys page lists those the account licenses (none without). */
  surveys?: readonly CatalogDataset[];
  /** Bounds of the Tables page's saved tables per user and account (default DEFAULT_SAVED_TABLE_LIMITS: 50 per user, 500 per account, 4 MiB per result, 256 MiB per account). */
  savedTables?: Partial<SavedTableLimits>;
}

/** The developer portal: a framework-neutral handler of HandlerRequests under basePath. */
export interface Portal {
  readonly basePath: string;
  owns(path: string): boolean;
  handle(request: HandlerRequest): Promise<HandlerResponse>;
  /**
   * Where the API reference page reads the OpenAPI document from: a function answering what
   * GET /docs serves (mountPortal passes the API handler's). Without one the page links the JSON.
   */
  useApiDocument(read: () => Promise<unknown>): void;
  /** How the Tables page computes a table: the API's POST /tables as the user's account (mountPortal passes the API handler's). */
  useTables(compute: TableCompute): void;
  /** The API's POST /tabbooks as a user's account (the Tables page's tab book download). */
  useTabbooks?(compute: TabbookCompute): void;
  /** How the Audiences page runs the API's /audiences operations as the user (mountPortal passes the API handler's). */
  useAudiences?(call: AudienceCall): void;
}

/** Confirmations shown after a redirect, named by the `done` query flag (a fixed text, never the query's). */
const DONE: Readonly<Record<string, string>> = {
  password: 'Your password is changed. Use the new one next time you sign in.',
  'signed-out': 'You are signed out. Your session has ended on the server.',
};
const doneOf = (query: URLSearchParams): string | undefined => {
  const flag = query.get('done');
  return flag !== null && Object.hasOwn(DONE, flag) ? DONE[flag] : undefined;
};

/** The labels of the portal's form fields, for the library's errors about them. */
const FIELD_LABELS: Readonly<Record<string, string>> = { from: 'From', to: 'To', name: 'Environment', expires: 'Expires' };
const labelOf = (field: string): string | undefined => (Object.hasOwn(FIELD_LABELS, field) ? FIELD_LABELS[field] : undefined);
/** A failure's message as the portal shows it: its fields named as the form labels them. */
const messageOf = (error: unknown): string => (error instanceof CrosstabError ? labelledMessage(error, labelOf) : (error as Error).message);
const SESSION_COOKIE = 'crosstab_portal';
const SIGN_IN_COOKIE = 'crosstab_portal_signin';
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** The Tables page's script checks expressions with a same-origin GET: only that page may connect (to its own origin). */
const SAME_ORIGIN_FETCH = { 'content-security-policy': SECURITY_HEADERS['content-security-policy'].replace("style-src 'self';", "style-src 'self'; connect-src 'self';") };

function cookies(request: HandlerRequest): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of (headerOf(request.headers, 'cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) map.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return map;
}

function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

function formOf(request: HandlerRequest): URLSearchParams {
  const body = typeof request.body === 'string' ? request.body : request.body instanceof Uint8Array ? Buffer.from(request.body).toString('utf8') : '';
  return new URLSearchParams(body);
}

/** Creates the portal handler; pages are rendered on the server, with one small script for copy buttons. */
export function createPortal(options: PortalOptions): Portal {
  const base = (options.basePath ?? '/portal').replace(/\/+$/, '');
  const { db } = options;
  const throttle = new SignInThrottle(db, options.signInThrottle);
  const apiUrl = (): string => (typeof options.apiUrl === 'function' ? options.apiUrl() : options.apiUrl);

  const proxies = proxyTrust(options.trustProxy, 'trustProxy');
  const secure = (request: HandlerRequest): boolean => options.secureCookies ?? forwardedProto(request, proxies) === 'https';
  const cookie = (request: HandlerRequest, name: string, value: string, maxAge: number): string =>
    `${name}=${value}; Path=${base}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure(request) ? '; Secure' : ''}`;
  const page = (status: number, body: string | Uint8Array, extra: Record<string, string> = {}): HandlerResponse => ({
    status,
    headers: { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', ...extra },
    body,
  });
  const redirect = (location: string, extra: Record<string, string> = {}): HandlerResponse => ({ status: 303, headers: { ...SECURITY_HEADERS, location, ...extra }, body: '' });
  const context = (title: string, session?: Session): PageContext => ({ base, title, apiDocs: `${apiUrl()}/docs`, ...(session ? { user: { email: session.email, account: session.accountName, csrf: session.csrfToken } } : {}) });
  const csrfRefused = (): HandlerResponse =>
    page(403, `<!doctype html><html lang="en"><title>Refused</title><main><h1>Form refused</h1><p>The form's security token is missing or out of date. <a href="${base}">Go back to the portal</a>, reload the page and try again.</p></main></html>`);

  async function signInForm(request: HandlerRequest, error?: string, email?: string, status = 200, info?: string): Promise<HandlerResponse> {
    const token = randomBytes(24).toString('base64url');
    return page(status, signInPage(context('Sign in'), token, error, email, info), { 'set-cookie': cookie(request, SIGN_IN_COOKIE, token, 600) });
  }

  async function keysView(session: Session, message?: { kind: 'error' | 'success'; text: string }, status = 200): Promise<HandlerResponse> {
    const account = await accountById(db, session.accountId);
    return page(status, keysPage(context('Access & keys', session), session.csrfToken, account, await listKeys(db, session.accountId), message));
  }

  function curlFor(apiKey: string): string {
    return `curl -s ${apiUrl()}/crosstab \\\n  -H 'Content-Type: application/json' \\\n  -H 'Service-Engine-Authorizer: ${apiKey}' \\\n  -d '${options.exampleBody}'`;
  }

  /**
   * A new-key or rotate form carries the id of the key it creates, chosen when the page was
   * made: sent again (a reload of the answer, a double click), it finds that key and creates
   * nothing. Answers 409 with the keys page then; undefined when the form is new. `error`:
   * the insert found the id taken (the same form sent twice at once).
   */
  async function alreadySent(session: Session, id: string | undefined, error?: unknown): Promise<HandlerResponse | undefined> {
    if (id === undefined) return undefined;
    if (error !== undefined && !(error instanceof CrosstabError && error.details.field === 'id')) return undefined;
    const key = (await listKeys(db, session.accountId)).find((candidate) => candidate.id === id);
    if (key === undefined) {
      return error === undefined ? undefined : keysView(session, { kind: 'error', text: 'This form is out of date: nothing was created. Reload the page and send it again.' }, 409);
    }
    return keysView(session, { kind: 'error', text: `This form was already sent: it created key ${key.name} (${key.id}), whose secret was shown once, on the page that answered it. No other key was created. If the secret was not copied, rotate that key to get a new one.` }, 409);
  }

  /** The usage page or its CSV; a bad range is answered on the page, with the entered values kept. */
  /** The Surveys page: the catalog of the account's licensed surveys, one survey's detail when `?survey=` names it. */
  async function surveys(session: Session, query: URLSearchParams): Promise<HandlerResponse> {
    const selected = query.get('survey') ?? undefined;
    const catalog = accountCatalog(await accountById(db, session.accountId), options.surveys ?? [], selected);
    const missing = selected !== undefined && catalog.detail === undefined ? selected.slice(0, 60) : undefined;
    return page(missing === undefined ? 200 : 404, surveysPage(context('Surveys', session), catalog, missing));
  }

  async function usage(session: Session, csv: boolean, query: URLSearchParams): Promise<HandlerResponse> {
    const today = new Date().toISOString().slice(0, 10);
    const range = { from: query.get('from') || `${today.slice(0, 8)}01`, to: query.get('to') || today };
    let bounds: { from: Date | null; to: Date | null };
    try {
      bounds = parseUsageRange(range.from, range.to);
    } catch (error) {
      if (!(error instanceof CrosstabError)) throw error;
      return page(400, usagePage(context('Usage', session), undefined, range, messageOf(error)));
    }
    if (csv) {
      const detail = await usageDetail(db, session.accountName, bounds.from, bounds.to);
      // Built from the parsed dates only: nothing the client typed reaches a header.
      const first = (bounds.from as Date).toISOString().slice(0, 10);
      const last = new Date((bounds.to as Date).getTime() - 1).toISOString().slice(0, 10);
      const filename = `usage-${session.accountName}-${first}-${last}.csv`;
      return { status: 200, headers: { ...SECURITY_HEADERS, 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${filename}"` }, body: usageCsv(detail) };
    }
    const [byDay, byKey, byOperation] = (await usageReports(db, { account: session.accountName, ...range, by: ['day', 'key', 'operation'] })) as [UsageReport, UsageReport, UsageReport];
    return page(200, usagePage(context('Usage', session), { byDay, byKey, byOperation }, range));
  }

  const asset = (contentType: string, body: string): HandlerResponse => ({ status: 200, headers: { 'content-type': contentType, 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' }, body });

  async function signInPost({ request, cookies: jar }: RouteContext): Promise<HandlerResponse> {
    const form = formOf(request);
    if (!sameToken(form.get('csrf') ?? undefined, jar.get(SIGN_IN_COOKIE))) return csrfRefused();
    const email = form.get('email') ?? '';
    const address = clientAddress(request, proxies);
    const attempt = await throttle.attempt(address);
    if (!attempt.admitted) {
      const wait = attempt.retryAfterSeconds;
      const minutes = Math.ceil(wait / 60);
      const message = `Too many failed sign-ins from your network address: try again in ${minutes} minute${minutes === 1 ? '' : 's'}. If you forgot your password, ask your provider contact for a new one.`;
      const refused = await signInForm(request, message, email, 429);
      return { ...refused, headers: { ...refused.headers, 'retry-after': String(wait) } };
    }
    const result = await signIn(db, email, form.get('password') ?? '');
    // A right password (also of a disabled user) is not a failure of this address.
    if (result.ok || result.passwordRight) await attempt.succeeded();
    if (!result.ok) return signInForm(request, result.message, email, 401);
    return redirect(`${base}/keys`, { 'set-cookie': cookie(request, SESSION_COOKIE, result.sessionId, SESSION_SECONDS) });
  }

  async function changePasswordPost(request: HandlerRequest, session: Session, form: URLSearchParams): Promise<HandlerResponse> {
    const changed = await changePassword(db, session, form.get('current') ?? '', form.get('next') ?? '', form.get('repeat') ?? '');
    if ('problem' in changed) return page(400, passwordPage(context('Password', session), session.csrfToken, session.mustChangePassword, changed.problem));
    return redirect(`${base}/keys?done=password`, { 'set-cookie': cookie(request, SESSION_COOKIE, changed.sessionId, SESSION_SECONDS) });
  }

  let apiReferences: ApiReferenceCache | undefined;
  let computeTable: TableCompute | undefined;
  let computeTabbook: TabbookCompute | undefined;
  let callAudiences: AudienceCall | undefined;
  /** The API reference page, rendered from the OpenAPI document GET /docs serves now. */
  async function apiReference(request: HandlerRequest, session: Session | undefined): Promise<HandlerResponse> {
    const json = `${apiUrl()}/docs`;
    if (apiReferences === undefined) return page(200, layout(context('API reference', session), html`<h1>API reference</h1><p>The API describes itself at <a href="${json}">${json}</a> (OpenAPI, JSON).</p>`));
    // Rendered once per portal: the public page is kept as bytes, with ETag and compressed forms.
    const answer = await apiReferences.answer(context('API reference', session), json, request.headers);
    return page(answer.status, answer.body, answer.headers);
  }

  async function newKey(session: Session, form: URLSearchParams): Promise<HandlerResponse> {
    const id = form.get('id') ?? undefined;
    const sent = await alreadySent(session, id);
    if (sent) return sent;
    try {
      const expires = form.get('expires') || undefined;
      const { apiKey, key } = await addKey(db, { account: session.accountName, name: form.get('name') ?? '', expiresAt: parseExpiry(expires === undefined ? undefined : `${expires}T23:59:59Z`), userId: session.userId, ...(id === undefined ? {} : { id }) });
      return page(200, newKeyPage(context('New key', session), apiKey, key, curlFor(apiKey)));
    } catch (error) {
      return (await alreadySent(session, id, error)) ?? keysView(session, { kind: 'error', text: messageOf(error) }, 400);
    }
  }

  async function keyAction(session: Session, form: URLSearchParams, keyId: string, verb: string): Promise<HandlerResponse> {
    const id = verb === 'rotate' ? (form.get('id') ?? undefined) : undefined;
    const sent = await alreadySent(session, id);
    if (sent) return sent;
    try {
      if (verb === 'revoke') {
        const key = await revokeKey(db, session.accountId, keyId);
        options.keys.invalidate();
        return keysView(session, { kind: 'success', text: `Key ${key.name} (${key.id}) is revoked: calls with it now get 401.` });
      }
      const rotated = await rotateKey(db, session.accountId, keyId, { graceSeconds: Number(form.get('grace') ?? '0'), userId: session.userId, ...(id === undefined ? {} : { id }) });
      options.keys.invalidate();
      return page(200, newKeyPage(context('Rotated key', session), rotated.apiKey, rotated.key, curlFor(rotated.apiKey), rotated.old));
    } catch (error) {
      return (await alreadySent(session, id, error)) ?? keysView(session, { kind: 'error', text: messageOf(error) }, 400);
    }
  }

  /** Context of a route that needs a session (signed-in, account): the session is there. */
  type SignedIn = RouteContext & { session: Session };
  const signedIn = (handle: (context: SignedIn) => Promise<HandlerResponse> | HandlerResponse) => (context: RouteContext) => handle(context as SignedIn);
  const posted = (handle: (context: SignedIn & { form: URLSearchParams }) => Promise<HandlerResponse>) => (context: RouteContext) => handle(context as SignedIn & { form: URLSearchParams });

  /** Every page and action of the portal, checked in this order within each access level. */
  const routes: PortalRoute[] = [
    { method: 'GET', path: '/assets/portal.css', access: 'static', handle: () => asset('text/css; charset=utf-8', PORTAL_CSS) },
    { method: 'GET', path: '/assets/portal.js', access: 'static', handle: () => asset('text/javascript; charset=utf-8', PORTAL_JS) },
    { method: 'GET', path: '/assets/favicon.svg', access: 'static', handle: () => asset('image/svg+xml', PORTAL_ICON_SVG) },
    { method: 'GET', path: '/sign-in', access: 'public', handle: ({ request, session, query }) => (session ? redirect(`${base}/keys`) : signInForm(request, undefined, undefined, 200, doneOf(query))) },
    { method: 'POST', path: '/sign-in', access: 'public', handle: signInPost },
    {
      method: 'POST', path: '/sign-out', access: 'signed-in',
      handle: signedIn(async ({ request, session }) => {
        await signOut(db, session);
        return redirect(`${base}/sign-in?done=signed-out`, { 'set-cookie': cookie(request, SESSION_COOKIE, '', 0) });
      }),
    },
    { method: 'POST', path: '/password', access: 'signed-in', handle: posted(({ request, session, form }) => changePasswordPost(request, session, form)) },
    { method: '*', path: '/password', access: 'signed-in', handle: signedIn(({ session }) => page(200, passwordPage(context('Password', session), session.csrfToken, session.mustChangePassword))) },
    { method: '*', path: '', access: 'account', handle: () => redirect(`${base}/keys`) },
    { method: '*', path: '/', access: 'account', handle: () => redirect(`${base}/keys`) },
    { method: 'POST', path: '/keys', access: 'account', handle: posted(({ session, form }) => newKey(session, form)) },
    { method: '*', path: '/keys', access: 'account', handle: signedIn(({ session, query }) => { const done = doneOf(query); return keysView(session, done === undefined ? undefined : { kind: 'success', text: done }); }) },
    { method: 'GET', path: '/api', access: 'public', handle: ({ request, session }) => apiReference(request, session) },
    { method: 'POST', path: /^\/keys\/(key_[0-9a-f]{16})\/(rotate|revoke)$/, access: 'account', handle: posted(({ session, form, params }) => keyAction(session, form, params[0] as string, params[1] as string)) },
    { method: 'GET', path: '/usage', access: 'account', handle: signedIn(({ session, query }) => usage(session, false, query)) },
    { method: 'GET', path: '/usage.csv', access: 'account', handle: signedIn(({ session, query }) => usage(session, true, query)) },
    { method: 'GET', path: '/surveys', access: 'account', handle: signedIn(({ session, query }) => surveys(session, query)) },
    ...tablesRoutes({
      db,
      keys: options.keys,
      base,
      surveys: options.surveys ?? [],
      ...(options.savedTables === undefined ? {} : { savedTables: options.savedTables }),
      compute: () => computeTable,
      tabbook: () => computeTabbook,
      context,
      page: (status, body) => page(status, body, SAME_ORIGIN_FETCH),
      redirect,
      file: (contentType, filename, body) => ({ status: 200, headers: { ...SECURITY_HEADERS, 'content-type': contentType, 'content-disposition': `attachment; filename="${filename.replace(/[^A-Za-z0-9_.-]/g, '_')}"` }, body }),
      json: (status, value) => ({ status, headers: { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(value) }),
    }),
    ...audiencesRoutes({ db, keys: options.keys, base, surveys: options.surveys ?? [], call: () => callAudiences, context, page: (status, body) => page(status, body), redirect }),
  ];

  const notFound = (): HandlerResponse => page(404, `<!doctype html><html lang="en"><title>Not found</title><main><h1>Page not found</h1><p><a href="${base}">Back to the portal</a></p></main></html>`);

  async function route(request: HandlerRequest, method: string, path: string, query: URLSearchParams): Promise<HandlerResponse> {
    const run = (found: { route: PortalRoute; params: string[] }, session: Session | undefined, form: URLSearchParams | undefined, jar: Map<string, string>) =>
      found.route.handle({ request, session, form, query, cookies: jar, params: found.params });
    const assets = findRoute(routes, 'static', method, path);
    if (assets) return run(assets, undefined, undefined, new Map());

    const jar = cookies(request);
    const session = await sessionOf(db, jar.get(SESSION_COOKIE));
    const open = findRoute(routes, 'public', method, path);
    if (open) return run(open, session, undefined, jar);
    const allow = allowedMethods(routes, 'public', path);
    if (allow.length > 0) return page(405, 'Method not allowed', { allow: allow.join(', ') });
    if (session === undefined) return path === '' || path === '/' ? redirect(`${base}/sign-in`) : method === 'GET' ? signInForm(request, undefined, undefined, 401, 'Sign in to continue.') : csrfRefused();

    const form = method === 'POST' ? formOf(request) : undefined;
    if (form && !sameToken(form.get('csrf') ?? undefined, session.csrfToken)) return csrfRefused();
    const signedInRoute = findRoute(routes, 'signed-in', method, path);
    if (signedInRoute) return run(signedInRoute, session, form, jar);
    // A one-time password must be replaced before anything else.
    if (session.mustChangePassword) return redirect(`${base}/password`);
    const accountRoute = findRoute(routes, 'account', method, path);
    return accountRoute ? run(accountRoute, session, form, jar) : notFound();
  }

  return {
    basePath: base,
    useApiDocument: (read) => {
      apiReferences = new ApiReferenceCache(read);
    },
    useTabbooks: (compute) => {
      computeTabbook = compute;
    },
    useTables: (compute) => {
      computeTable = compute;
    },
    useAudiences: (call) => {
      callAudiences = call;
    },
    owns: (path) => {
      const pathname = path.split('?', 1)[0] ?? '';
      return pathname === base || pathname.startsWith(`${base}/`);
    },
    async handle(request) {
      const [pathname = '', search = ''] = request.path.split('?', 2);
      const method = request.method.toUpperCase();
      try {
        return await route(request, method, pathname.slice(base.length), new URLSearchParams(search));
      } catch (error) {
        // An unavailable database is said once in the log (store_down), not per page.
        if (isCrosstabError(error) && error.code === ErrorCode.storeUnavailable) {
          return page(503, `<!doctype html><html lang="en"><title>Unavailable</title><main><h1>The portal is unavailable right now</h1><p>Its database cannot be reached. Please try again in a few seconds. <a href="${base}">Back to the portal</a></p></main></html>`, { 'retry-after': '5' });
        }
        process.stderr.write(`crosstab portal: ${(error as Error).stack ?? String(error)}\n`);
        return page(500, `<!doctype html><html lang="en"><title>Error</title><main><h1>Something went wrong</h1><p>Please try again. <a href="${base}">Back to the portal</a></p></main></html>`);
      }
    },
  };
}

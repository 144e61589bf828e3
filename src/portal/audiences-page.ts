/**
 * The Audiences page: the account's saved audiences the user may use (their own and the
 * shared ones), a form to save one (the Tables page sends its base here), and, for those the
 * user may edit, an edit and a delete form. Every action runs the API's own /audiences
 * operations in-process as the signed-in user, so the portal checks exactly what the API
 * checks (names, the expression against the survey and the account's groups, cycles).
 */
import type { Database, DbKeyStore } from '../access/index.js';
import type { ApiKeyRecord, HandlerResponse } from '../http/index.js';
import { html, layout, notice, raw, type PageContext } from './html.js';
import type { PortalRoute, RouteContext } from './routes.js';
import type { Session } from './sessions.js';
import { requestRights, type RequestRights } from './account-rights.js';
import type { CatalogDataset } from '../http/survey-catalog.js';
import type { AudienceJson } from '../http/audiences-operation.js';

/** Runs an /audiences operation of the API as `caller`: its answer as the API sends it. */
export type AudienceCall = (caller: ApiKeyRecord, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) => Promise<HandlerResponse>;

export interface AudiencesDependencies {
  db: Database;
  keys: DbKeyStore;
  surveys: readonly CatalogDataset[];
  call(): AudienceCall | undefined;
  context(title: string, session: Session): PageContext;
  page(status: number, body: string): HandlerResponse;
  redirect(location: string): HandlerResponse;
  base: string;
}

/** An audience as the API's /audiences operations answer it. */
type AudienceView = AudienceJson;

interface Entered {
  survey: string;
  name: string;
  expression: string;
  label: string;
  shared: boolean;
}

const DONE: Readonly<Record<string, string>> = { saved: 'The audience is saved: write its @name in any expression.', edited: 'The audience is saved.', deleted: 'The audience is deleted.' };
const bodyText = (answer: HandlerResponse): string => (typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body).toString('utf8'));
const errorOf = (answer: HandlerResponse): string => {
  try {
    const { error } = JSON.parse(bodyText(answer)) as { error: { message: string; hint: string } };
    return `${error.message} ${error.hint}`;
  } catch {
    return 'The audience could not be saved.';
  }
};

export function audiencesRoutes(deps: AudiencesDependencies): PortalRoute[] {
  const { db, base } = deps;
  type SignedIn = RouteContext & { session: Session };

  const rightsOf = (session: Session): RequestRights => requestRights(db, deps.keys, deps.surveys, session);

  async function view(session: Session, rights: RequestRights, entered: Entered, message: { kind: 'error' | 'success'; text: string } | undefined, status = 200): Promise<HandlerResponse> {
    const call = deps.call();
    const { caller, catalog } = await rights();
    const surveys = catalog.surveys.map((survey) => survey.SurveyCode);
    let audiences: AudienceView[] = [];
    if (call !== undefined) {
      const answer = await call(caller, 'GET', '/audiences');
      if (answer.status === 200) audiences = (JSON.parse(bodyText(answer)) as { Audiences: AudienceView[] }).Audiences;
    }
    const context = { ...deps.context('Audiences', session), current: 'audiences' as const };
    const csrf = html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;
    const rows = audiences.map((audience) => {
      const actions = audience.Editable
        ? html`<details><summary>Edit</summary>
            <form method="post" action="${base}/audiences/${audience.AudienceId}/edit" class="stack">${csrf}
              <label>Name <input name="name" value="${audience.Name}" required pattern="[a-z0-9][a-z0-9_\\-]{0,63}"></label>
              <label>Expression <input name="expression" value="${audience.Expression ?? ''}" required spellcheck="false"></label>
              <label>Label <input name="label" value="${audience.Label ?? ''}"></label>
              <label><input type="checkbox" name="shared" value="1"${raw(audience.Shared ? ' checked' : '')}> Shared in the account</label>
              <button type="submit" class="small">Save ${audience.Reference}</button>
            </form></details>
            <form method="post" action="${base}/audiences/${audience.AudienceId}/delete" data-confirm="Delete the audience ${audience.Reference}?">${csrf}<button type="submit" class="danger small" aria-label="Delete ${audience.Reference}">Delete</button></form>`
        : html``;
      return html`<tr><td data-label="Audience"><code>${audience.Reference}</code></td><td data-label="Survey">${audience.SurveyCode}</td><td data-label="Label">${audience.Label ?? ''}</td>
        <td data-label="Expression">${audience.Expression === null ? html`<em>outside your groups</em>` : html`<code>${audience.Expression}</code>`}</td>
        <td data-label="Shared">${audience.Shared ? 'shared in the account' : 'only you'}</td><td data-label="Saved by">${audience.Owner === session.email ? 'you' : (audience.Owner ?? 'the account')}</td>
        <td data-label="Actions"><div class="cell-actions">${actions}</div></td></tr>`;
    });
    const body = html`<h1>Audiences</h1>
      <p>An audience is an expression saved under a name: write <code>@name</code> in any expression of the API or the Tables page (<code>@women-25-40 AND region=3</code>). Shared audiences are seen by everyone in your account; the others only by you.</p>
      ${notice(message?.kind ?? 'success', message?.text)}
      ${call === undefined ? notice('error', 'Audiences cannot be saved here: the portal is not mounted beside the API.') : html``}
      <h2>Save an audience</h2>
      <form method="post" action="${base}/audiences" class="stack" id="audience-form">${csrf}
        <label for="audience-survey">Survey</label>
        <select id="audience-survey" name="survey">${surveys.map((survey) => html`<option value="${survey}"${raw(survey === entered.survey ? ' selected' : '')}>${survey}</option>`)}</select>
        <label for="audience-name">Name <span class="help">lower-case letters, digits, - and _; used as @name</span></label>
        <input id="audience-name" name="name" value="${entered.name}" required autocomplete="off" spellcheck="false">
        <label for="audience-expression">Expression</label>
        <input id="audience-expression" name="expression" value="${entered.expression}" required autocomplete="off" spellcheck="false">
        <label for="audience-label">Label</label>
        <input id="audience-label" name="label" value="${entered.label}" autocomplete="off">
        <label><input type="checkbox" name="shared" value="1"${raw(entered.shared ? ' checked' : '')}> Share with everyone in my account</label>
        <button type="submit">Save audience</button>
      </form>
      <h2>Your audiences</h2>
      ${audiences.length === 0 ? html`<p>No audiences yet.</p>` : html`<table class="list" id="audiences"><thead><tr><th scope="col">Audience</th><th scope="col">Survey</th><th scope="col">Label</th><th scope="col">Expression</th><th scope="col">Shared</th><th scope="col">Saved by</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>`}`;
    return deps.page(status, layout(context, body));
  }

  const enteredOf = (form: URLSearchParams, surveys?: string): Entered => ({
    survey: form.get('survey') ?? surveys ?? '',
    name: (form.get('name') ?? '').trim(),
    expression: (form.get('expression') ?? '').trim(),
    label: (form.get('label') ?? '').trim(),
    shared: form.get('shared') === '1',
  });
  const requestOf = (entered: Entered) => ({ Name: entered.name, Expression: entered.expression, Label: entered.label === '' ? null : entered.label, Shared: entered.shared });

  async function act(session: Session, entered: Entered, method: 'POST' | 'PUT' | 'DELETE', path: string, body: unknown, done: string): Promise<HandlerResponse> {
    const call = deps.call();
    const rights = rightsOf(session);
    if (call === undefined) return view(session, rights, entered, { kind: 'error', text: 'Audiences cannot be saved here: the portal is not mounted beside the API.' }, 503);
    const answer = await call((await rights()).caller, method, path, body);
    if (answer.status >= 300) return view(session, rights, entered, { kind: 'error', text: errorOf(answer) }, answer.status >= 500 ? answer.status : 400);
    return deps.redirect(`${base}/audiences?done=${done}`);
  }

  return [
    {
      method: 'GET',
      path: '/audiences',
      access: 'account',
      handle: (context) => {
        const { session, query } = context as SignedIn;
        const done = query.get('done');
        return view(session, rightsOf(session), enteredOf(query), done !== null && Object.hasOwn(DONE, done) ? { kind: 'success', text: DONE[done] as string } : undefined);
      },
    },
    {
      method: 'POST',
      path: '/audiences',
      access: 'account',
      handle: (context) => {
        const { session, form } = context as SignedIn & { form: URLSearchParams };
        const entered = enteredOf(form);
        return act(session, entered, 'POST', '/audiences', { SurveyCode: entered.survey, ...requestOf(entered) }, 'saved');
      },
    },
    {
      method: 'POST',
      path: /^\/audiences\/(aud_[0-9a-f]{16})\/(edit|delete)$/,
      access: 'account',
      handle: (context) => {
        const { session, form, params } = context as SignedIn & { form: URLSearchParams };
        const [id, verb] = params as [string, string];
        const entered = enteredOf(form);
        return verb === 'delete' ? act(session, entered, 'DELETE', `/audiences/${id}`, undefined, 'deleted') : act(session, entered, 'PUT', `/audiences/${id}`, requestOf(entered), 'edited');
      },
    },
  ];
}

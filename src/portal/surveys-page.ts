/**
 * The portal's Surveys page: the account's licensed surveys and, for one, its variables,
 * values, ranges and codes within the account's authorization groups, as GET
 * /surveys/{SurveyCode} of the API gives them (the same catalog, the same suppression).
 */
import type { Account } from '../access/index.js';
import type { ApiKeyRecord } from '../http/index.js';
import { entitledToSurvey } from '../http/auth.js';
import { callerGroups, surveyDetail, surveySummary, type CatalogDataset, type ShownCount, type SurveyDetail, type SurveySummary } from '../http/survey-catalog.js';
import { html, layout, notice, raw, type PageContext, type Raw } from './html.js';
import { formatNumber } from '../text/number-text.js';

/** The account's rights as the API's entitlement checks read them. */
export function accountRights(account: Account): ApiKeyRecord {
  const groupsBySurvey = Object.fromEntries(account.licences.map((licence) => [licence.survey, licence.groups]));
  return { id: `account:${account.id}`, hash: '', surveys: account.licences.map((licence) => licence.survey), groups: [], groupsBySurvey, createdAt: account.createdAt, revoked: false, accountId: account.id };
}

/** The surveys the account may query, and the catalog of `selected` when it is one of them. */
export function accountCatalog(account: Account, datasets: readonly CatalogDataset[], selected: string | undefined): { surveys: SurveySummary[]; detail?: SurveyDetail } {
  const rights = accountRights(account);
  const usable = datasets.filter((dataset) => entitledToSurvey(rights, dataset.info.survey) && callerGroups(rights, dataset.info) !== undefined);
  const chosen = usable.find((dataset) => dataset.info.survey === selected);
  const groups = chosen === undefined ? undefined : callerGroups(rights, chosen.info);
  const surveys = usable.map((dataset) => surveySummary(dataset.info));
  return chosen === undefined || groups === undefined ? { surveys } : { surveys, detail: surveyDetail(chosen, groups) };
}

function count(shown: ShownCount, threshold: number): string {
  return shown === null ? `${threshold} or fewer` : `≈ ${formatNumber(shown, 0)}`;
}

function detailSection(detail: SurveyDetail): Raw {
  const threshold = detail.SuppressedAtOrBelow;
  const variables = detail.Variables.map(
    (variable) => html`<tr>
      <th scope="row"><code>${variable.Name}</code></th>
      <td>${variable.Label ?? ''}</td>
      <td>${variable.AuthorizationGroup}</td>
      <td>
        ${variable.Values === undefined
          ? html`<p>${formatNumber(variable.Distinct, 0)} distinct answers.</p>`
          : html`<ul class="values">${variable.Values.map((value) => html`<li><code>${value.Expression}</code> ${value.Label ?? ''} <small>(${count(value.Respondents, threshold)})</small></li>`)}</ul>`}
        ${variable.Range ? html`<p>Range: <code>${variable.Range.Expression}</code></p>` : raw('')}
        ${variable.Missing ? html`<p>No answer: <code>${variable.Missing.Expression}</code> <small>(${count(variable.Missing.Respondents, threshold)})</small></p>` : raw('')}
      </td>
    </tr>`,
  );
  const codes = detail.Codes.map(
    (code) => html`<tr><th scope="row"><code>${code.Expression}</code></th><td>${code.Label ?? ''}</td><td>${code.AuthorizationGroup}</td><td>${code.Definition === undefined ? '' : html`<code>${code.Definition}</code>`}</td></tr>`,
  );
  return html`<section aria-labelledby="survey-title">
    <h2 id="survey-title">${detail.Name} (<code>${detail.SurveyCode}</code>)</h2>
    <p>${formatNumber(detail.Respondents, 0)} respondents; weights ${detail.Weights.join(', ')} (the first is the default); AudienceReportUnits ${detail.AudienceReportUnits}; your groups: ${detail.AuthorizationGroups.join(', ')}.
      Respondent counts are rounded to ${detail.CountRounding} and not shown for ${threshold} respondents or fewer. Every expression below can be used as it is in PopulationBaseCode, TargetCodes, Rows or Columns.</p>
    <h3>Variables</h3>
    <table><thead><tr><th scope="col">Variable</th><th scope="col">Label</th><th scope="col">Group</th><th scope="col">Values</th></tr></thead><tbody>${variables}</tbody></table>
    <h3>Codes</h3>
    ${codes.length === 0 ? html`<p>No codes in your groups.</p>` : html`<table><thead><tr><th scope="col">Code</th><th scope="col">Label</th><th scope="col">Group</th><th scope="col">Definition</th></tr></thead><tbody>${codes}</tbody></table>`}
  </section>`;
}

export function surveysPage(context: PageContext, catalog: { surveys: SurveySummary[]; detail?: SurveyDetail }, missing?: string): string {
  const list = catalog.surveys.map(
    (survey) => html`<li><a href="${context.base}/surveys?survey=${encodeURIComponent(survey.SurveyCode)}"${raw(catalog.detail?.SurveyCode === survey.SurveyCode ? ' aria-current="page"' : '')}>${survey.Name} (${survey.SurveyCode})</a></li>`,
  );
  const body = html`<h1>Surveys</h1>
    <p class="lead">What your account may query. The API gives the same lists: GET /surveys and GET /surveys/{SurveyCode}.</p>
    ${notice('error', missing === undefined ? undefined : `Your account has no survey ${missing}.`)}
    ${list.length === 0 ? html`<p>Your account has no survey it may query yet; ask your sales contact.</p>` : html`<ul>${list}</ul>`}
    ${catalog.detail ? detailSection(catalog.detail) : raw('')}`;
  return layout({ ...context, current: 'surveys' }, body);
}

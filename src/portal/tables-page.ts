/**
 * The Tables page: the form that builds a table of a licensed survey (base, rows, columns,
 * weight, statistics, missing answers), the table as a heat map, its downloads, and the
 * user's saved tables and those shared in the account.
 */
import { STAT_NAMES, type StatName, type TableJson } from '../index.js';
import type { SavedTable, SavedTableEntry } from '../access/index.js';
import type { SurveySummary } from '../http/survey-catalog.js';
import { bannerTable } from './banner-table.js';
import { html, layout, notice, raw, type PageContext, type Raw } from './html.js';
import { parseSpec, UNWEIGHTED, type TableForm, type TableSpec } from './table-spec.js';
import { nameText, valueText } from '../text/expression-text.js';

const STAT_LABELS: Readonly<Record<StatName, string>> = {
  vpct: 'Column % (always: the shading)',
  hpct: 'Row %',
  tpct: 'Table %',
  index: 'Index',
  ebase: 'Effective base',
  deff: 'Design effect',
  se: 'Standard error',
  moe: '95% margin of error',
  sig: 'Significance letters',
  chisq: 'Chi-square (Rao–Scott)',
};

/** What the page shows below the form. */
export interface TablesView {
  form: TableForm;
  surveys: SurveySummary[];
  /** The chosen survey's weights and variables (for the weight list and the variable list). */
  weights: string[];
  variables: Array<{ name: string; label?: string; values?: Array<{ value: string; label?: string }> }>;
  /** The chosen survey's name, as the table's title and its chart's. */
  surveyName?: string;
  /** The codebook's codes of the user's groups. */
  codes?: Array<{ name: string; label?: string }>;
  /** The saved tables listed (without their results). */
  saved: SavedTableEntry[];
  /** Saved tables the account may no longer use (a survey or group lost): listed without their spec. */
  unusable?: ReadonlySet<string>;
  /** What the audiences of a listed table say about it, by its id: refused, or its figures as of the save (savedListNote). */
  notes?: ReadonlyMap<string, string>;
  viewerId: string;
  /** The table shown: just computed (billed) or a saved one's stored result. */
  result?: { table: TableJson; computedAt: string; billed: boolean; saved?: SavedTable; stale?: string };
  /** The saved table the form was opened from. */
  openedFrom?: SavedTableEntry | SavedTable;
  error?: { message: string; field?: 'base' | 'rows' | 'columns' | 'weight' | 'statistics' | 'survey' };
  success?: string;
}

const invalid = (view: TablesView, field: string): Raw => raw(view.error?.field === field ? ' aria-invalid="true" aria-errormessage="form-error"' : '');

function formSection(context: PageContext, view: TablesView): Raw {
  const { form } = view;
  const surveys = view.surveys.map((survey) => html`<option value="${survey.SurveyCode}"${raw(survey.SurveyCode === form.survey ? ' selected' : '')}>${survey.Name} (${survey.SurveyCode})</option>`);
  const weights = [
    html`<option value=""${raw(form.weight === '' ? ' selected' : '')}>Survey default${view.weights[0] ? ` (${view.weights[0]})` : ''}</option>`,
    ...view.weights.map((weight) => html`<option value="${weight}"${raw(form.weight === weight ? ' selected' : '')}>${weight}</option>`),
    html`<option value="${UNWEIGHTED}"${raw(form.weight === UNWEIGHTED ? ' selected' : '')}>Unweighted</option>`,
  ];
  const stats = STAT_NAMES.map(
    (name) => html`<label class="check"><input type="checkbox" name="stat" value="${name}"${raw(form.statistics.includes(name) || name === 'vpct' ? ' checked' : '')}${raw(name === 'vpct' ? ' disabled' : '')}> ${STAT_LABELS[name]}</label>`,
  );
  const check = `${context.base}/tables/check`;
  return html`<section class="card" aria-labelledby="build-title">
    <h2 id="build-title">Build a table</h2>
    <form method="post" action="${context.base}/tables#result-title" id="table-form" data-check="${check}">
      <input type="hidden" name="csrf" value="${context.user?.csrf ?? ''}">
      ${view.openedFrom ? html`<input type="hidden" name="saved" value="${view.openedFrom.id}">` : raw('')}
      <div class="row">
        <div><label for="survey">Survey</label><select id="survey" name="survey"${invalid(view, 'survey')}>${surveys}</select></div>
        <div><label for="weight">Weight</label><select id="weight" name="weight"${invalid(view, 'weight')}>${weights}</select></div>
      </div>
      <label for="base">Base <span class="help">who is counted: an expression such as <code>*</code> (everyone) or <code>year=2024</code></span></label>
      <input id="base" name="base" value="${form.base}" required autocomplete="off" spellcheck="false" data-kind="base" aria-describedby="base-check"${invalid(view, 'base')}>
      <p class="check-status" id="base-check" aria-live="polite"></p>
      <div class="grid2 axes">
        <div><label for="rows">Rows <span class="help">one per line: a variable (a row per value) or an expression</span></label>
          <textarea id="rows" name="rows" rows="4" required spellcheck="false" data-kind="axis" aria-describedby="rows-check"${invalid(view, 'rows')}>${form.rows}</textarea>
          <p class="check-status" id="rows-check" aria-live="polite"></p></div>
        <div><label for="columns">Columns <span class="help">one per line, as rows</span></label>
          <textarea id="columns" name="columns" rows="4" required spellcheck="false" data-kind="axis" aria-describedby="columns-check"${invalid(view, 'columns')}>${form.columns}</textarea>
          <p class="check-status" id="columns-check" aria-live="polite"></p></div>
      </div>
      <fieldset class="stats"${invalid(view, 'statistics')}><legend>Statistics</legend>${stats}</fieldset>
      <fieldset class="missing"><legend>Blank answers of whole variables</legend>
        <label class="check"><input type="radio" name="missing" value="show"${raw(form.missing === 'show' ? ' checked' : '')}> Show a "No answer" row or column</label>
        <label class="check"><input type="radio" name="missing" value="hide"${raw(form.missing === 'hide' ? ' checked' : '')}> Hide them</label>
      </fieldset>
      <div class="actions wrap">
        <button type="submit" name="action" value="compute">Compute table</button>
        <button type="submit" name="action" value="csv" class="secondary">Download CSV</button>
        <button type="submit" name="action" value="xlsx" class="secondary">Download XLSX</button>
        <button type="submit" name="action" value="pptx" class="secondary">Download PPTX</button>
        <button type="submit" name="action" value="audience" class="secondary">Save base as audience</button>
      </div>
      <p class="help">Each computed table or download is one billed call of your account (operation "table" on the Usage page). Opening a saved table shows its stored result and is not billed.</p>
      <details class="tabbook"${raw(view.error?.message.startsWith('Tab book:') ? ' open' : '')}><summary>Tab book: one banner across a table per stub (XLSX)</summary>
        <div class="grid2 axes">
          <div><label for="banner">Banner <span class="help">one per line: a variable (a column per value), a code or an expression</span></label>
            <textarea id="banner" name="banner" rows="3" spellcheck="false"></textarea></div>
          <div><label for="stubs">Stubs <span class="help">one variable per line (a table each), or <code>all</code></span></label>
            <textarea id="stubs" name="stubs" rows="3" spellcheck="false">all</textarea></div>
        </div>
        <p class="help">Uses the survey, base, weight, statistics and blank answers above. One billed call (operation "tabbook" on the Usage page), whatever the number of tables; the same workbook as <code>crosstab tabbook</code>.</p>
        <button type="submit" class="secondary" formaction="${context.base}/tables/tabbook" formmethod="post" formnovalidate>Download tab book (XLSX)</button>
      </details>
      <div class="save row">
        <div><label for="table-name">Save as</label><input id="table-name" name="tableName" maxlength="120" value="${view.openedFrom?.name ?? ''}" placeholder="e.g. Degree by sex, 2024"></div>
        <div class="shrink"><label class="check"><input type="checkbox" name="shared" value="1"${raw(view.openedFrom?.shared ? ' checked' : '')}> Share with my account</label></div>
        <div class="shrink"><button type="submit" name="action" value="save" class="secondary">Compute and save</button></div>
      </div>
    </form>
  </section>`;
}

function savedSection(context: PageContext, view: TablesView): Raw {
  if (view.saved.length === 0) return html`<section class="card" aria-labelledby="saved-title"><h2 id="saved-title">Saved tables</h2><p class="muted">No saved tables yet: compute a table and save it.</p></section>`;
  const csrf = html`<input type="hidden" name="csrf" value="${context.user?.csrf ?? ''}">`;
  const rows = view.saved.map((table) => {
    const mine = table.userId === view.viewerId;
    const actions = mine
      ? html`<form method="post" action="${context.base}/tables/saved/${table.id}/${table.shared ? 'unshare' : 'share'}">${csrf}<button type="submit" class="secondary small" aria-label="${table.shared ? 'Stop sharing' : 'Share'} ${table.name}">${table.shared ? 'Stop sharing' : 'Share'}</button></form>
         <form method="post" action="${context.base}/tables/saved/${table.id}/delete" data-confirm="Delete the saved table ${table.name}?">${csrf}<button type="submit" class="danger small" aria-label="Delete ${table.name}">Delete</button></form>`
      : html``;
    const rename = mine
      ? html`<form method="post" action="${context.base}/tables/saved/${table.id}/rename" class="rename">${csrf}<label class="sr-only" for="rename-${table.id}">New name of ${table.name}</label><input id="rename-${table.id}" name="tableName" maxlength="120" required value="${table.name}"><button type="submit" class="secondary small" aria-label="Rename ${table.name}">Rename</button></form>`
      : html``;
    const spec = view.unusable?.has(table.id) ? undefined : parseSpec(table.spec);
    const note = view.notes?.get(table.id);
    return html`<tr><td data-label="Table"><a href="${context.base}/tables/saved/${table.id}#result-title">${table.name}</a>${note === undefined ? raw('') : html`<p class="help saved-note">${note}</p>`}</td><td data-label="Survey">${spec?.SurveyCode ?? ''}</td><td data-label="Spec" class="spec">${spec === undefined ? html`<span class="muted">uses what your account may no longer use</span>` : specSummary(spec)}</td><td data-label="Updated"><time datetime="${table.updatedAt}">${table.updatedAt.replace('T', ' ').slice(0, 16)} UTC</time></td><td data-label="Saved by">${mine ? 'you' : table.owner}</td><td data-label="Shared">${table.shared ? 'shared in the account' : 'only you'}</td><td data-label="Actions"><div class="cell-actions">${rename}${actions}</div></td></tr>`;
  });
  return html`<section class="card" aria-labelledby="saved-title"><h2 id="saved-title">Saved tables</h2>
    <p class="help">Open a table of yours and save it under its name to update it; save it under another name to keep a copy.</p>
    <table class="keys-table saved-tables"><thead><tr><th scope="col">Table</th><th scope="col">Survey</th><th scope="col">Spec</th><th scope="col">Updated</th><th scope="col">Saved by</th><th scope="col">Visible to</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

/** What a saved table computes, in a line: rows by columns, its base and weight. */
function specSummary(spec: TableSpec): Raw {
  const entries = (items: TableSpec['Rows']) => items.map((item) => ('Variable' in item ? item.Variable : item.Label === undefined ? item.Expression : `${item.Label} = ${item.Expression}`)).join(', ');
  const weight = spec.Weight === null ? 'unweighted' : spec.Weight === undefined ? 'default weight' : `weight ${spec.Weight}`;
  return html`<code>${entries(spec.Rows)}</code> by <code>${entries(spec.Columns)}</code>; base <code>${spec.PopulationBaseCode}</code>; ${weight}`;
}

/** A label as a `Label = expression` line can carry it: none of `=`, parentheses, `@` or AND/OR/NOT. */
const lineLabel = (text: string): string => text.replace(/[=()@]/g, ' ').replace(/\b(AND|OR|NOT)\b/g, (word) => word.toLowerCase()).replace(/\s+/g, ' ').trim();

/** Most values a variable lists as choices (a variable with more is tabulated whole or in ranges). */
const MAX_CHOICES = 100;

/**
 * The variables and codebook codes the user may use: each variable with its codes as choices
 * (tick some, add them to Rows or Columns as one labelled line, `Bachelor's + Graduate =
 * degree=3,4`), each codebook code to add as it is.
 */
function variablesSection(view: TablesView): Raw {
  if (view.variables.length === 0) return raw('');
  const add = (line: string, what: string) =>
    html`<span class="add-line"><button type="button" class="secondary small" data-add-to="rows" data-line="${line}" aria-label="Add ${what} to rows">Rows</button><button type="button" class="secondary small" data-add-to="columns" data-line="${line}" aria-label="Add ${what} to columns">Columns</button></span>`;
  const items = view.variables.map((variable) => {
    const values = variable.values !== undefined && variable.values.length <= MAX_CHOICES ? variable.values : undefined;
    if (values === undefined) return html`<li><code>${variable.name}</code> ${variable.label ?? ''} ${add(variable.name, variable.name)}</li>`;
    const choices = values.map((value) => {
      const expression = `${nameText(variable.name)}=${valueText(value.value)}`;
      return html`<label class="check"><input type="checkbox" data-variable="${nameText(variable.name)}" data-value="${valueText(value.value)}" data-label="${lineLabel(value.label ?? expression)}"> <code>${value.value}</code> ${value.label ?? ''}</label>`;
    });
    return html`<li><details class="codes"><summary><code>${variable.name}</code> ${variable.label ?? ''} <span class="muted">(${values.length} codes)</span></summary>
      <fieldset class="choices" aria-label="Codes of ${variable.name}">${choices}</fieldset>
      <p class="add-choices">Whole variable: ${add(variable.name, `the variable ${variable.name}`)} Ticked codes as one line: <button type="button" class="secondary small" data-add-ticked="rows">Add to rows</button> <button type="button" class="secondary small" data-add-ticked="columns">Add to columns</button></p></details></li>`;
  });
  const codes = (view.codes ?? []).map((code) => html`<li><code>${code.name}</code> ${code.label ?? ''} ${add(code.label === undefined ? code.name : `${lineLabel(code.label)} = ${code.name}`, `the code ${code.name}`)}</li>`);
  const codeList = codes.length === 0 ? raw('') : html`<h3>Codebook codes (${codes.length})</h3><ul class="columns codebook">${codes}</ul>`;
  return html`<details class="card variables" id="variables"><summary>Variables and codes of ${view.form.survey} you may use (${view.variables.length} variables${codes.length > 0 ? `, ${codes.length} codes` : ''})</summary>
    <p class="help">A line of Rows or Columns may carry a label: <code>Degree: BA+ = degree=3,4</code>. Tick codes of a variable and add them as one line, labelled with their labels.</p>
    <ul class="picker">${items}</ul>${codeList}<p class="check-status" id="picker-status" aria-live="polite"></p></details>`;
}

export function tablesPage(context: PageContext, view: TablesView): string {
  const result = view.result;
  const resultSection =
    result === undefined
      ? raw('')
      : html`<section class="card" aria-labelledby="result-title">
          <h2 id="result-title">${result.saved ? result.saved.name : 'Table'}</h2>
          <p class="muted">${result.billed ? `Computed ${result.computedAt}: billed as one call.` : `Stored result computed ${result.computedAt}; opening it was not billed. Compute it again to refresh it.`}</p>
          ${notice('info', result.stale)}
          ${bannerTable(result.table, view.form.survey, { ...(view.surveyName === undefined ? {} : { title: view.surveyName }), variableLabels: Object.fromEntries(view.variables.flatMap((variable) => (variable.label ? [[variable.name, variable.label]] : []))) })}
        </section>`;
  const body = html`<h1>Tables</h1>
    <p class="lead">Crosstabs of your licensed surveys, computed as POST /tables computes them, within your account's licences.</p>
    ${notice('error', view.error === undefined ? undefined : view.error.message)}
    ${notice('success', view.success)}
    ${view.surveys.length === 0 ? html`<p>Your account has no survey that makes tables yet; ask your sales contact.</p>` : html`${formSection(context, view)}${resultSection}${variablesSection(view)}`}
    ${savedSection(context, view)}`;
  // The error box names the field; its id lets the field point at it.
  return layout({ ...context, current: 'tables' }, raw(body.html.replace('<div class="notice error" role="alert">', '<div class="notice error" role="alert" id="form-error">')));
}

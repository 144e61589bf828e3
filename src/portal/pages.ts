import { newKeyId, type Account, type KeyInfo, type UsageReport } from '../access/index.js';
import { html, layout, notice, raw, type PageContext, type Raw } from './html.js';

export function signInPage(context: PageContext, csrf: string, error?: string, email = '', info?: string): string {
  return layout(context, html`<div class="card narrow">
  <h1>Sign in</h1>
  <p class="lead">Use the e-mail address and password your provider contact gave you.</p>
  ${notice('error', error)}${notice('info', info)}
  <form method="post" action="${context.base}/sign-in">
    <input type="hidden" name="csrf" value="${csrf}">
    <label for="email">E-mail address</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${email}" autofocus>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <div class="actions"><button type="submit">Sign in</button></div>
  </form>
</div>`);
}

export function passwordPage(context: PageContext, csrf: string, forced: boolean, error?: string): string {
  return layout(context, html`<div class="card narrow">
  <h1>${forced ? 'Choose your password' : 'Change your password'}</h1>
  ${forced ? html`<p class="lead">You signed in with a one-time password. Choose your own password to continue.</p>` : html``}
  ${notice('error', error)}
  <form method="post" action="${context.base}/password">
    <input type="hidden" name="csrf" value="${csrf}">
    <label for="current">${forced ? 'One-time password' : 'Current password'}</label>
    <input id="current" name="current" type="password" autocomplete="current-password" required>
    <label for="next">New password <span class="help">(at least 12 characters)</span></label>
    <input id="next" name="next" type="password" autocomplete="new-password" minlength="12" required>
    <label for="repeat">Repeat the new password</label>
    <input id="repeat" name="repeat" type="password" autocomplete="new-password" minlength="12" required>
    <div class="actions"><button type="submit">Save password</button></div>
  </form>
</div>`);
}

const GRACE = [
  ['0', 'now'],
  ['3600', 'in 1 hour'],
  ['86400', 'in 24 hours'],
  ['604800', 'in 7 days'],
] as const;

function keyRow(context: PageContext, csrf: string, key: KeyInfo): Raw {
  const live = key.status === 'active' || key.status === 'revoking';
  return html`<tr>
    <td data-label="Environment"><strong>${key.name}</strong><br><small class="muted">${key.id}</small></td>
    <td data-label="Status"><span class="pill status-${key.status}">${key.status === 'revoking' ? `revoked at ${key.revokedAt?.slice(0, 16).replace('T', ' ')} UTC` : key.status}</span></td>
    <td class="nowrap" data-label="Created">${key.createdAt.slice(0, 10)}</td>
    <td class="nowrap" data-label="Expires">${key.expiresAt === null ? 'never' : key.expiresAt.slice(0, 10)}</td>
    <td data-label="Actions"><div class="cell-actions">${live && key.status === 'active'
      ? html`<form class="inline" method="post" action="${context.base}/keys/${key.id}/rotate">
          <input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="id" value="${newKeyId()}">
          <label class="help tight" for="grace-${key.id}">Old key stops</label>
          <select id="grace-${key.id}" name="grace">${GRACE.map(([value, label]) => html`<option value="${value}">${label}</option>`)}</select>
          <button class="secondary" type="submit" aria-label="Rotate key ${key.name} ${key.id}">Rotate</button>
        </form>`
      : html``}${live
      ? html`<form method="post" action="${context.base}/keys/${key.id}/revoke" data-confirm="Revoke ${key.name} (${key.id})? Calls with it fail at once.">
          <input type="hidden" name="csrf" value="${csrf}"><button class="danger" type="submit" aria-label="Revoke key ${key.name} ${key.id}">Revoke</button></form>`
      : html``}</div></td>
  </tr>`;
}

export function keysPage(context: PageContext, csrf: string, account: Account, keys: KeyInfo[], message?: { kind: 'error' | 'success'; text: string }): string {
  const licences = account.licences.length === 0
    ? html`<p>No survey is licensed yet. Ask your provider contact to enable data access.</p>`
    : html`<table><thead><tr><th scope="col">Survey</th><th scope="col">Authorization groups you may use</th></tr></thead><tbody>
        ${account.licences.map((licence) => html`<tr><td><strong>${licence.survey}</strong></td><td>${licence.groups.length === 0 ? html`<span class="muted">licensed, no permission configured yet: queries are refused</span>` : licence.groups.map((group) => html`<span class="pill">${group === '_ALL_' ? 'every group (_ALL_)' : group}</span>`)}</td></tr>`)}
      </tbody></table>`;
  const limits = `Rate limit: ${account.rateLimitPerMinute === null ? 'none' : `${account.rateLimitPerMinute} calls per minute`} · Monthly quota: ${account.monthlyQuota === null ? 'none' : `${account.monthlyQuota} billed calls`}`;
  return layout({ ...context, current: 'keys' }, html`<h1>Access &amp; API keys</h1>
  <p class="lead">Account <strong>${account.name}</strong>. ${limits}</p>
  ${message ? notice(message.kind, message.text) : raw('')}
  <section class="card" aria-labelledby="licences"><h2 id="licences">Licensed surveys and permissions</h2>${licences}</section>
  <section class="card" aria-labelledby="create"><h2 id="create">Create an API key</h2>
    <p class="muted">One key per environment (production, staging, ...). The key is shown once; only a hash is stored.</p>
    <form method="post" action="${context.base}/keys">
      <input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="id" value="${newKeyId()}">
      <div class="row">
        <div><label for="name">Environment</label><input id="name" name="name" required pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]{0,62}" placeholder="production"></div>
        <div><label for="expires">Expires <span class="help">(optional)</span></label><input id="expires" name="expires" type="date"></div>
        <div class="shrink"><button type="submit">Create key</button></div>
      </div>
    </form>
  </section>
  <section class="card" aria-labelledby="keys"><h2 id="keys">Your keys</h2>
    ${keys.length === 0 ? html`<p class="muted">No key yet.</p>` : html`<div class="table-wrap"><table class="keys-table"><thead><tr><th scope="col">Environment</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
      <tbody>${keys.map((key) => keyRow(context, csrf, key))}</tbody></table></div>`}
  </section>`);
}

export function newKeyPage(context: PageContext, apiKey: string, key: KeyInfo, curl: string, old?: KeyInfo): string {
  return layout({ ...context, current: 'keys' }, html`<h1>Your new API key</h1>
  ${notice('success', old ? `Key ${old.name} rotated: the old key ${old.id} stops working at ${old.revokedAt}.` : `Key ${key.name} created.`)}
  <section class="card" aria-labelledby="secret-title"><h2 id="secret-title">${key.name} · ${key.id}</h2>
    <p><strong>Copy it now: it is shown only this once.</strong> Store it in your server's secret store; never put it in a web page or an app.</p>
    <label for="api-key">API key</label>
    <div class="secret"><input id="api-key" readonly value="${apiKey}" aria-describedby="copy-status"><button type="button" data-copy="api-key" data-status="copy-status">Copy</button></div>
    <p id="copy-status" class="help" role="status"></p>
    <h2>Try it</h2>
    <pre id="curl">${curl}</pre>
    <button class="secondary" type="button" data-copy="curl" data-status="curl-status">Copy the command</button> <span id="curl-status" class="help" role="status"></span>
    <div class="actions"><a class="button" href="${context.base}/keys">Done</a></div>
  </section>`);
}

function chart(days: Array<{ day: string; calls: number }>): Raw {
  if (days.length === 0) return html`<p class="muted">No billed call in this range.</p>`;
  const width = 900;
  const height = 220;
  const max = Math.max(...days.map((d) => d.calls));
  const step = (width - 60) / days.length;
  const barWidth = Math.max(2, Math.min(48, step * 0.7));
  const bars = days.map((d, i) => {
    const h = Math.round(((height - 50) * d.calls) / max);
    const x = 50 + i * step + (step - barWidth) / 2;
    return raw(`<rect class="bar-rect" x="${x.toFixed(1)}" y="${height - 30 - h}" width="${barWidth.toFixed(1)}" height="${h}"><title>${d.day}: ${d.calls} calls</title></rect>` +
      (days.length <= 16 || i % Math.ceil(days.length / 12) === 0 ? `<text x="${(x + barWidth / 2).toFixed(1)}" y="${height - 12}" text-anchor="middle">${d.day.slice(5)}</text>` : ''));
  });
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="Billed calls per day, highest ${max}">
    <text x="44" y="24" text-anchor="end">${max}</text><text x="44" y="${height - 30}" text-anchor="end">0</text>
    <line x1="48" y1="${height - 30}" x2="${width}" y2="${height - 30}" stroke="#dfe3ea"></line>${bars}</svg>`;
}

/** Every day of the range (up to 92), with 0 for days without calls, for the chart. */
function everyDay(rows: Array<{ day: string; calls: number }>, range: { from: string; to: string }): Array<{ day: string; calls: number }> {
  const from = Date.parse(`${range.from}T00:00:00Z`);
  const to = Date.parse(`${range.to}T00:00:00Z`);
  if (Number.isNaN(from) || Number.isNaN(to) || to < from || to - from > 92 * 86_400_000) return rows;
  const calls = new Map(rows.map((row) => [row.day, row.calls]));
  const days = [];
  for (let time = from; time <= to; time += 86_400_000) {
    const day = new Date(time).toISOString().slice(0, 10);
    days.push({ day, calls: calls.get(day) ?? 0 });
  }
  return days;
}

/**
 * The usage page: the range form (with the values as entered, also after an error) and,
 * when the range was read, the report of it.
 */
export function usagePage(context: PageContext, report: { byDay: UsageReport; byKey: UsageReport; byOperation: UsageReport } | undefined, range: { from: string; to: string }, error?: string): string {
  const query = `from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}`;
  const form = html`<section class="card"><form class="row" method="get" action="${context.base}/usage">
    <div><label for="from">From</label><input id="from" name="from" type="date" value="${range.from}"></div>
    <div><label for="to">To</label><input id="to" name="to" type="date" value="${range.to}"></div>
    <div class="shrink"><button type="submit">Show</button></div>
    ${report === undefined ? html`` : html`<div class="shrink"><a class="button secondary" href="${context.base}/usage.csv?${query}" download>Download CSV</a></div>`}
  </form></section>`;
  if (report === undefined) {
    return layout({ ...context, current: 'usage' }, html`<h1>Usage</h1>
  <p class="lead">Billed calls (successful POST /crosstab and POST /tables) of your account in a range of days (UTC).</p>
  ${notice('error', error)}
  ${form}`);
  }
  const { byDay, byKey, byOperation } = report;
  const operations = byOperation.rows as Array<{ operation: string; calls: number }>;
  const days = byDay.rows as Array<{ day: string; calls: number }>;
  const keys = byKey.rows as Array<{ key: string; name: string; calls: number }>;
  return layout({ ...context, current: 'usage' }, html`<h1>Usage</h1>
  <p class="lead">Billed calls (successful POST /crosstab and POST /tables) of account <strong>${byDay.account}</strong>: <strong>${byDay.calls}</strong> from ${range.from} to ${range.to} (UTC).</p>
  ${notice('error', error)}
  ${form}
  <section class="card" aria-labelledby="per-day"><h2 id="per-day">Per day</h2>${byDay.calls === 0 ? chart([]) : chart(everyDay(days, range))}</section>
  <div class="grid2">
    <section class="card" aria-labelledby="day-table"><h2 id="day-table">Calls per day</h2>
      <table><thead><tr><th scope="col">Day</th><th scope="col" class="num">Calls</th></tr></thead><tbody>${days.map((d) => html`<tr><td>${d.day}</td><td class="num">${d.calls}</td></tr>`)}</tbody></table></section>
    <section class="card" aria-labelledby="key-table"><h2 id="key-table">Calls per key</h2>
      <table><thead><tr><th scope="col">Key</th><th scope="col" class="num">Calls</th></tr></thead><tbody>${keys.map((k) => html`<tr><td>${k.name} <small class="muted">${k.key}</small></td><td class="num">${k.calls}</td></tr>`)}</tbody></table></section>
    <section class="card" aria-labelledby="operation-table"><h2 id="operation-table">Calls per operation</h2>
      <p class="help">crosstab: POST /crosstab; table: POST /tables and the tables computed on the Tables page.</p>
      <table><thead><tr><th scope="col">Operation</th><th scope="col" class="num">Calls</th></tr></thead><tbody>${operations.map((o) => html`<tr><td>${o.operation}</td><td class="num">${o.calls}</td></tr>`)}</tbody></table></section>
  </div>`);
}

export function usageCsv(report: UsageReport): string {
  const rows = report.rows as Array<{ day: string; key: string; name: string; survey: string; calls: number }>;
  // RFC 4180: a cell holding the separator, a quote, a CR or an LF is quoted, quotes doubled.
  const cell = (value: string): string => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
  return ['day,key,name,survey,calls', ...rows.map((r) => [r.day, r.key, r.name, r.survey, String(r.calls)].map(cell).join(','))].join('\r\n') + '\r\n';
}

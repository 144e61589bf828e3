/** The portal's only stylesheet and script, served by the package itself (no CDN). */
import { BANNER_CSS, bannerShadeCss } from './banner-table.js';
import { shadeCss } from './heat-map.js';

export const PORTAL_CSS = `
:root { --ink:#14213d; --muted:#5c677d; --line:#dfe3ea; --bg:#f5f7fb; --card:#fff; --brand:#2346d8; --brand-dark:#1a34a8; --ok:#1f7a4d; --warn:#a15c00; --bad:#b42318; }
* { box-sizing: border-box; }
body { margin:0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color:var(--ink); background:var(--bg); }
a { color:var(--brand); }
.skip { position:absolute; left:-999px; } .skip:focus { left:1rem; top:1rem; background:#fff; padding:.5rem; z-index:9; }
.top { background:var(--ink); color:#fff; }
.bar { max-width:1040px; margin:0 auto; display:flex; align-items:center; gap:2rem; padding:.9rem 1.5rem; }
.brand { color:#fff; text-decoration:none; font-weight:700; font-size:1.1rem; white-space:nowrap; }
.logo { color:#8fb3ff; } .tag { font-weight:400; opacity:.75; font-size:.9rem; margin-left:.3rem; }
header nav { display:flex; gap:1.25rem; flex:1; } header nav a { white-space:nowrap; color:#cfd8ff; text-decoration:none; padding:.3rem 0; border-bottom:2px solid transparent; }
header nav a[aria-current="page"], header nav a:hover { color:#fff; border-bottom-color:#8fb3ff; }
.who { display:flex; align-items:center; gap:1rem; font-size:.85rem; text-align:right; white-space:nowrap; } .who small { opacity:.7; }
main { max-width:1040px; margin:2rem auto; padding:0 1.5rem; outline:none; }
h1 { font-size:1.6rem; margin:.2rem 0 1rem; } h2 { font-size:1.15rem; margin:0 0 .8rem; }
.lead { color:var(--muted); margin-top:-.5rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:1.4rem 1.5rem; margin-bottom:1.5rem; box-shadow:0 1px 2px rgba(20,33,61,.04); }
.narrow { max-width:440px; margin:3rem auto; }
label { display:block; font-weight:600; margin:.9rem 0 .3rem; } .help { color:var(--muted); font-size:.85rem; font-weight:400; }
input, select { font:inherit; padding:.55rem .7rem; border:1px solid #767f8f; border-radius:6px; width:100%; background:#fff; color:var(--ink); }
input:focus, select:focus, button:focus, a:focus, summary:focus { outline:3px solid var(--brand); outline-offset:2px; }
.top a:focus, .top button:focus, .skip:focus { outline-color:#8fb3ff; }
button, .button { white-space:nowrap; font:inherit; font-weight:600; background:var(--brand); color:#fff; border:0; border-radius:6px; padding:.55rem 1rem; cursor:pointer; text-decoration:none; display:inline-block; }
button:hover, .button:hover { background:var(--brand-dark); }
button.secondary, .button.secondary { background:#fff; color:var(--brand); border:1px solid var(--brand); }
button.danger { background:#fff; color:var(--bad); border:1px solid var(--bad); }
button.link { background:none; color:#cfd8ff; padding:0; border:0; text-decoration:underline; font-weight:400; }
.row { display:flex; gap:1rem; align-items:flex-end; flex-wrap:wrap; } .row > div { flex:1; min-width:180px; }
.actions { margin-top:1.2rem; display:flex; gap:.7rem; }
table { width:100%; border-collapse:collapse; font-size:.92rem; }
th, td { text-align:left; padding:.55rem .6rem; border-bottom:1px solid var(--line); vertical-align:middle; }
th { color:var(--muted); font-weight:600; font-size:.8rem; text-transform:uppercase; letter-spacing:.03em; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
.inline { display:flex; gap:.4rem; align-items:center; } .inline select { width:auto; padding:.3rem .4rem; } .inline button { padding:.35rem .7rem; font-size:.85rem; }
.pill { display:inline-block; padding:.1rem .55rem; border-radius:999px; font-size:.8rem; font-weight:600; background:#eef2ff; color:var(--brand-dark); margin:0 .25rem .25rem 0; }
.status-active { background:#e7f6ee; color:var(--ok); } .status-revoking, .status-expired { background:#fff4e5; color:var(--warn); } .status-revoked { background:#fdecea; color:var(--bad); }
.notice { border-radius:8px; padding:.8rem 1rem; margin-bottom:1.2rem; border:1px solid; }
.notice.error { background:#fdecea; border-color:#f5c2bd; color:var(--bad); } .notice.success { background:#e7f6ee; border-color:#b7e2c9; color:var(--ok); } .notice.info { background:#eef2ff; border-color:#c9d4ff; }
.secret { display:flex; gap:.6rem; } .secret input { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:.95rem; }
pre { background:#0f1a33; color:#e6ecff; padding:1rem; border-radius:8px; overflow-x:auto; font-size:.85rem; white-space:pre-wrap; word-break:break-all; }
.chart { width:100%; height:auto; } .chart .bar-rect { fill:var(--brand); } .chart text { fill:var(--muted); font-size:11px; }
.grid2 { display:grid; grid-template-columns:1fr 1fr; gap:1.5rem; } @media (max-width: 760px) { .grid2 { grid-template-columns:1fr; } .bar { flex-wrap:wrap; gap:.8rem; } }
footer { max-width:1040px; margin:2rem auto; padding:0 1.5rem 2rem; color:var(--muted); font-size:.85rem; }
.muted { color:var(--muted); } .nowrap { white-space:nowrap; } .row > div.shrink { flex:0 0 auto; min-width:0; } label.tight { margin:0; white-space:nowrap; }
.table-wrap { overflow-x:auto; } .inline { flex-wrap:wrap; } .cell-actions { display:flex; gap:.6rem; align-items:center; flex-wrap:wrap; }
@media (max-width: 640px) {
  main { margin:1.2rem auto; padding:0 .8rem; } .card { padding:1rem; } .bar { padding:.8rem; justify-content:space-between; } header nav { order:3; flex:1 0 100%; flex-wrap:wrap; gap:.2rem 1.1rem; }
  .keys-table thead { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); }
  .keys-table, .keys-table tbody, .keys-table tr, .keys-table td { display:block; width:100%; }
  .keys-table tr { border-bottom:1px solid var(--line); padding:.6rem 0; } .keys-table td { border:0; padding:.2rem 0; }
  .keys-table td[data-label]::before { content:attr(data-label); display:block; color:var(--muted); font-size:.75rem; text-transform:uppercase; letter-spacing:.03em; }
}
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:.88em; overflow-wrap:anywhere; }
.toc ul { list-style:none; padding:0; margin:0; columns:2 16rem; } .toc li { margin:.2rem 0; }
.op h3 { font-size:1.05rem; margin:0 0 .5rem; overflow-wrap:anywhere; } .op h4 { margin:1rem 0 .4rem; font-size:.95rem; }
.method { display:inline-block; min-width:4.2rem; text-align:center; border-radius:4px; padding:.05rem .4rem; font-size:.78rem; font-weight:700; color:#fff; background:#3d4a63; }
.method-get { background:#1f6b45; } .method-post { background:var(--brand); } .method-options { background:#5c677d; }
table.ref td { vertical-align:top; } table.ref td:first-child { white-space:nowrap; } table.ref table.ref { margin-top:.4rem; font-size:.85rem; }
pre.prose { background:none; color:var(--ink); padding:0; font:inherit; white-space:pre-wrap; word-break:normal; }
textarea { font:.92rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; padding:.55rem .7rem; border:1px solid #767f8f; border-radius:6px; width:100%; background:#fff; color:var(--ink); resize:vertical; }
textarea:focus, input[type="checkbox"]:focus, input[type="radio"]:focus, .table-wrap:focus { outline:3px solid var(--brand); outline-offset:2px; }
[aria-invalid="true"] { border-color:var(--bad); box-shadow:0 0 0 1px var(--bad); }
fieldset { border:1px solid #767f8f; border-radius:8px; margin:1rem 0 0; padding:.4rem 1rem .8rem; } legend { font-weight:600; padding:0 .3rem; }
label.check { display:inline-flex; align-items:center; gap:.4rem; font-weight:400; margin:.35rem 1.2rem .1rem 0; } label.check input { width:auto; margin:0; accent-color:var(--brand); }
.check-status { min-height:1.3em; margin:.25rem 0 0; font-size:.85rem; } .check-status.valid { color:var(--ok); } .check-status.invalid { color:var(--bad); }
.grid2.axes { gap:1rem; } .actions.wrap { flex-wrap:wrap; } .save { margin-top:1rem; border-top:1px solid var(--line); padding-top:.4rem; }
button.small { padding:.3rem .7rem; font-size:.85rem; } .cell-actions form { margin:0; }
table.heatmap { width:auto; min-width:60%; border-collapse:separate; border-spacing:3px; }
table.heatmap caption { text-align:left; color:var(--muted); font-size:.85rem; padding-bottom:.4rem; }
table.heatmap th { text-transform:none; letter-spacing:0; font-size:.85rem; color:var(--ink); border-bottom:0; vertical-align:bottom; } table.heatmap th code { color:var(--muted); font-weight:400; font-size:.78rem; }
table.heatmap tbody th { vertical-align:middle; }
table.heatmap td { border:0; border-radius:4px; min-width:6.5rem; padding:.45rem .6rem; }
table.heatmap td .pct { font-size:1.05rem; font-weight:700; } table.heatmap td .fig { display:block; font-size:.78rem; }
table.heatmap td sup.letters { font-weight:700; font-size:.75rem; margin-left:.15rem; }
table.heatmap tr.bases td { background:#eef1f6; color:var(--ink); font-size:.85rem; }
table.heatmap td.very-unstable { outline:2px dashed #5c677d; outline-offset:-4px; }
.letter { color:var(--brand-dark); font-weight:700; }
.legend { font-size:.85rem; color:var(--ink); margin-top:.8rem; } .legend ul { margin:.3rem 0 0; padding-left:1.2rem; }
.legend .scale { display:flex; gap:3px; align-items:center; flex-wrap:wrap; margin:0; } .swatch { display:inline-block; min-width:3rem; text-align:center; padding:.15rem .3rem; border-radius:3px; font-size:.75rem; border:1px solid #767f8f; }
.variables summary { cursor:pointer; font-weight:600; } ul.picker { list-style:none; padding-left:0; columns:2 22rem; font-size:.88rem; } ul.picker > li { break-inside:avoid; margin:.2rem 0; } .variables details.codes summary { font-weight:400; } fieldset.choices { border:0; margin:.3rem 0; padding:0 0 0 .8rem; } .add-line button { margin-left:.3rem; } .rename { display:flex; gap:.3rem; } .rename input { min-width:8rem; max-width:14rem; } .sr-only { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; } ul.columns { columns:3 14rem; padding-left:1.1rem; font-size:.88rem; }
@media (max-width: 640px) { table.heatmap td { min-width:4.8rem; padding:.35rem .4rem; } .save > div { min-width:100%; } }
` + shadeCss() + BANNER_CSS + bannerShadeCss();

export const PORTAL_JS = `
document.addEventListener('click', function (event) {
  var button = event.target.closest('[data-copy]');
  if (!button) return;
  var source = document.getElementById(button.getAttribute('data-copy'));
  var text = source.value !== undefined ? source.value : source.textContent;
  var status = document.getElementById(button.getAttribute('data-status'));
  function done(message) { if (status) status.textContent = message; }
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(function () { done('Copied to the clipboard.'); }, function () { done('Select the text and copy it.'); });
  } else {
    if (source.select) source.select();
    try { document.execCommand('copy'); done('Copied to the clipboard.'); } catch (e) { done('Select the text and copy it.'); }
  }
});
(function () {
  var form = document.querySelector('form[data-check]');
  if (!form) return;
  var timers = {};
  function show(field, valid, message) {
    var status = document.getElementById(field.id + '-check');
    status.textContent = message;
    status.className = 'check-status ' + (valid ? 'valid' : 'invalid');
    if (valid) field.removeAttribute('aria-invalid'); else field.setAttribute('aria-invalid', 'true');
  }
  function ask(field, expression) {
    var survey = form.querySelector('[name=survey]').value;
    var url = form.getAttribute('data-check') + '?survey=' + encodeURIComponent(survey) + '&kind=' + field.getAttribute('data-kind') + '&expression=' + encodeURIComponent(expression);
    return fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } }).then(function (answer) { return answer.json(); });
  }
  function check(field) {
    var lines = field.tagName === 'TEXTAREA' ? field.value.split(/\\r?\\n/) : [field.value];
    var entries = [];
    lines.forEach(function (line, i) { if (line.trim() !== '') entries.push({ line: i + 1, text: line.trim() }); });
    if (entries.length === 0) { show(field, false, 'Required.'); return; }
    Promise.all(entries.map(function (entry) { return ask(field, entry.text); })).then(function (answers) {
      for (var i = 0; i < answers.length; i++) {
        if (!answers[i].valid) { show(field, false, (entries.length > 1 || field.tagName === 'TEXTAREA' ? 'Line ' + entries[i].line + ': ' : '') + answers[i].message); return; }
      }
      show(field, true, entries.length > 1 ? 'All ' + entries.length + ' lines are valid.' : answers[0].message);
    }, function () { show(field, true, ''); });
  }
  form.querySelectorAll('[data-kind]').forEach(function (field) {
    field.addEventListener('input', function () {
      clearTimeout(timers[field.id]);
      timers[field.id] = setTimeout(function () { check(field); }, 300);
    });
  });
  form.querySelector('[name=survey]').addEventListener('change', function () {
    form.querySelectorAll('[data-kind]').forEach(function (field) { if (field.value.trim() !== '') check(field); });
  });
})();
document.addEventListener('click', function (event) {
  var button = event.target.closest('[data-add-to],[data-add-ticked]');
  if (!button) return;
  var line = button.getAttribute('data-line');
  var where = button.getAttribute('data-add-to') || button.getAttribute('data-add-ticked');
  var status = document.getElementById('picker-status');
  if (line === null) {
    var ticked = [].slice.call(button.closest('details').querySelectorAll('input[type=checkbox][data-value]:checked'));
    if (ticked.length === 0) { if (status) status.textContent = 'Tick one or more codes first.'; return; }
    var label = ticked.map(function (box) { return box.getAttribute('data-label'); }).join(' + ');
    line = label + ' = ' + ticked[0].getAttribute('data-variable') + '=' + ticked.map(function (box) { return box.getAttribute('data-value'); }).join(',');
    ticked.forEach(function (box) { box.checked = false; });
  }
  var field = document.getElementById(where);
  if (!field) return;
  field.value = field.value.replace(/\\s+$/, '') + (field.value.trim() === '' ? '' : '\\n') + line;
  field.dispatchEvent(new Event('input', { bubbles: true }));
  if (status) status.textContent = 'Added to ' + where + ': ' + line;
});
document.addEventListener('submit', function (event) {
  var message = event.target.getAttribute('data-confirm');
  if (message && !window.confirm(message)) event.preventDefault();
});
`;

/** The portal's icon (the brand's grid mark), served at /favicon.ico and under the assets. */
export const PORTAL_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#14213d"/><g fill="#8fb3ff"><rect x="6" y="6" width="9" height="9" rx="1"/><rect x="17" y="6" width="9" height="9" rx="1"/><rect x="6" y="17" width="9" height="9" rx="1"/></g><rect x="17" y="17" width="9" height="9" rx="1" fill="#fff"/></svg>`;

/** The portal's only stylesheet and script, served by the package itself (no CDN). */
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
`;

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
document.addEventListener('submit', function (event) {
  var message = event.target.getAttribute('data-confirm');
  if (message && !window.confirm(message)) event.preventDefault();
});
`;

/** The portal's icon (the brand's grid mark), served at /favicon.ico and under the assets. */
export const PORTAL_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#14213d"/><g fill="#8fb3ff"><rect x="6" y="6" width="9" height="9" rx="1"/><rect x="17" y="6" width="9" height="9" rx="1"/><rect x="6" y="17" width="9" height="9" rx="1"/></g><rect x="17" y="17" width="9" height="9" rx="1" fill="#fff"/></svg>`;

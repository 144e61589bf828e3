/** Escapes text for HTML element content and attribute values. */
export function escape(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] as string);
}

/** A tagged template: interpolations are escaped unless wrapped in `raw()`. */
export interface Raw {
  readonly html: string;
}
export const raw = (html: string): Raw => ({ html });

export function html(strings: TemplateStringsArray, ...values: unknown[]): Raw {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    const part = Array.isArray(value) ? value.map((item) => (isRaw(item) ? item.html : escape(item))).join('') : isRaw(value) ? value.html : escape(value);
    out += part + (strings[index + 1] ?? '');
  });
  return raw(out);
}

function isRaw(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && 'html' in value && Object.keys(value).length === 1;
}

export interface PageContext {
  base: string;
  title: string;
  /** Signed in: the e-mail, account and CSRF token for the sign-out form. */
  user?: { email: string; account: string; csrf: string };
  /** The nav entry of this page. */
  current?: 'keys' | 'usage' | 'surveys' | 'tables' | 'audiences' | 'api';
  apiDocs: string;
}

/** The page frame: header with the product name, navigation, main landmark, footer. */
export function layout(context: PageContext, body: Raw): string {
  const { base, user } = context;
  const nav = user
    ? html`<nav aria-label="Portal">
        <a href="${base}/keys"${raw(context.current === 'keys' ? ' aria-current="page"' : '')}>Access &amp; keys</a>
        <a href="${base}/usage"${raw(context.current === 'usage' ? ' aria-current="page"' : '')}>Usage</a>
        <a href="${base}/surveys"${raw(context.current === 'surveys' ? ' aria-current="page"' : '')}>Surveys</a>
        <a href="${base}/tables"${raw(context.current === 'tables' ? ' aria-current="page"' : '')}>Tables</a>
        <a href="${base}/audiences"${raw(context.current === 'audiences' ? ' aria-current="page"' : '')}>Audiences</a>
        <a href="${base}/api"${raw(context.current === 'api' ? ' aria-current="page"' : '')}>API reference</a>
      </nav>
      <div class="who"><span>${user.email}<br><small>${user.account}</small></span>
        <form method="post" action="${base}/sign-out"><input type="hidden" name="csrf" value="${user.csrf}"><button class="link" type="submit">Sign out</button></form>
      </div>`
    : html``;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(context.title)} · Crosstab API developer portal</title>
<link rel="icon" href="${escape(base)}/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${escape(base)}/assets/portal.css">
<script src="${escape(base)}/assets/portal.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="bar">
  <a class="brand" href="${escape(base)}"><span class="logo" aria-hidden="true">▦</span> Crosstab API <span class="tag">Developer portal</span></a>
  ${nav.html}
</div></header>
<main id="main" tabindex="-1">
${body.html}
</main>
<footer><p>Keep API keys on your servers, never in a browser. Use one key per environment and rotate a key as soon as it may be exposed.</p></footer>
</body>
</html>`;
}

/** An error or notice box, announced by screen readers. */
export function notice(kind: 'error' | 'success' | 'info', text: string | undefined): Raw {
  if (!text) return raw('');
  return html`<div class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</div>`;
}

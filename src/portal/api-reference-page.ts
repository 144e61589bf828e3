import { html, layout, raw, type PageContext, type Raw } from './html.js';

/**
 * The API reference as a portal page, rendered from the OpenAPI document GET /docs serves
 * (read when the page is asked for): each path and operation with its parameters, request
 * body, responses (with the error codes their bodies carry) and the schemas they name.
 */
type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];
const refName = (ref: unknown): string | undefined => (typeof ref === 'string' ? ref.replace(/^#\/components\/schemas\//, '') : undefined);
/** An id for a path or schema anchor: letters, digits and dashes only. */
export const anchorOf = (text: string): string => text.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').toLowerCase() || 'root';

/** A schema's type in a few words, linking a named schema to its section. */
function typeOf(schema: unknown): Raw {
  const s = obj(schema);
  const ref = refName(s['$ref']);
  if (ref !== undefined) return html`<a href="#schema-${anchorOf(ref)}">${ref}</a>`;
  if (s['type'] === 'array') return html`array of ${typeOf(s['items'])}`;
  for (const key of ['oneOf', 'anyOf', 'allOf']) {
    if (Array.isArray(s[key])) return html`${key === 'allOf' ? 'all of' : 'one of'} ${(s[key] as unknown[]).map((item, i) => html`${i > 0 ? ', ' : ''}${typeOf(item)}`)}`;
  }
  const enumText = Array.isArray(s['enum']) ? ` (${(s['enum'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')})` : '';
  return html`<code>${String(s['type'] ?? 'any')}${s['format'] ? ` ${String(s['format'])}` : ''}</code>${enumText}`;
}

/** The properties of an object schema as a table (nested objects one level further). */
function propertiesTable(schema: Json, depth = 0): Raw {
  const properties = obj(schema['properties']);
  const names = Object.keys(properties);
  if (names.length === 0) return html`<p>${typeOf(schema)}</p>`;
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  return html`<div class="table-wrap"><table class="ref"><thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>
    ${names.map((name) => {
      const property = obj(properties[name]);
      const nested = depth < 2 && property['type'] === 'object' && property['properties'] ? propertiesTable(property, depth + 1) : raw('');
      return html`<tr><td><code>${name}</code>${required.has(name) ? html` <span class="pill">required</span>` : raw('')}</td><td>${typeOf(property)}</td><td>${String(property['description'] ?? '')}${nested}</td></tr>`;
    })}</tbody></table></div>`;
}

function schemaOfContent(content: unknown): { type: string; schema: unknown } | undefined {
  const [type, media] = Object.entries(obj(content))[0] ?? [];
  return type === undefined ? undefined : { type, schema: obj(media)['schema'] };
}

function operation(path: string, method: string, op: Json): Raw {
  const parameters = Array.isArray(op['parameters']) ? (op['parameters'] as Json[]) : [];
  const body = obj(op['requestBody']);
  const bodyContent = schemaOfContent(body['content']);
  const responses = Object.entries(obj(op['responses']));
  return html`<article class="card op" aria-labelledby="op-${method}-${anchorOf(path)}">
    <h3 id="op-${method}-${anchorOf(path)}"><span class="method method-${method}">${method.toUpperCase()}</span> <code>${path}</code></h3>
    <p>${String(op['summary'] ?? '')}</p>${op['description'] ? html`<p class="muted">${String(op['description'])}</p>` : raw('')}
    ${Array.isArray(op['security']) && (op['security'] as unknown[]).length > 0 ? html`<p class="help">Needs an API key (Service-Engine-Authorizer header) or a Bearer access token.</p>` : raw('')}
    ${parameters.length === 0 ? raw('') : html`<h4>Parameters</h4><div class="table-wrap"><table class="ref"><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>
      ${parameters.map((p) => html`<tr><td><code>${String(p['name'])}</code>${p['required'] ? html` <span class="pill">required</span>` : raw('')}</td><td>${String(p['in'])}</td><td>${typeOf(p['schema'])}</td><td>${String(p['description'] ?? '')}</td></tr>`)}</tbody></table></div>`}
    ${bodyContent === undefined ? raw('') : html`<h4>Request body</h4><p><code>${bodyContent.type}</code>: ${typeOf(bodyContent.schema)}${body['description'] ? ` · ${String(body['description'])}` : ''}</p>`}
    <h4>Responses</h4><div class="table-wrap"><table class="ref"><thead><tr><th scope="col">Status</th><th scope="col">Description</th><th scope="col">Body</th></tr></thead><tbody>
      ${responses.map(([status, response]) => {
        const r = obj(response);
        const content = schemaOfContent(r['content']);
        return html`<tr><td><code>${status}</code></td><td>${String(r['description'] ?? '')}</td><td>${content ? typeOf(content.schema) : html`<span class="muted">none</span>`}</td></tr>`;
      })}</tbody></table></div>
  </article>`;
}

/** The error codes an error schema's `error.code` may take. */
function errorCodes(schema: Json): string[] {
  const code = obj(obj(obj(obj(schema['properties'])['error'])['properties'])['code']);
  return Array.isArray(code['enum']) ? (code['enum'] as unknown[]).map(String) : [];
}

export function apiReferencePage(context: PageContext, document: unknown, jsonUrl: string): string {
  return apiReferenceLayout(context, apiReferenceBody(document, jsonUrl));
}

/** The page around a reference body made by apiReferenceBody (the body made once, the page per caller). */
export function apiReferenceLayout(context: PageContext, body: Raw): string {
  return layout({ ...context, current: 'api' }, body);
}

/** The reference itself, the page's <main> content: it depends on the document and its URL only. */
export function apiReferenceBody(document: unknown, jsonUrl: string): Raw {
  const doc = obj(document);
  const info = obj(doc['info']);
  const paths = obj(doc['paths']);
  const schemas = obj(obj(doc['components'])['schemas']);
  const server = String(obj((doc['servers'] as unknown[] | undefined)?.[0])['url'] ?? '');
  const errors = Object.entries(schemas).filter(([, schema]) => errorCodes(obj(schema)).length > 0);
  return html`<h1>API reference</h1>
  <p class="lead">${String(info['title'] ?? '')} · version ${String(info['version'] ?? '')} · base URL <code>${server}</code> · <a href="${jsonUrl}">OpenAPI document (JSON)</a></p>
  <nav class="card toc" aria-label="Operations"><h2>Operations</h2><ul>
    ${Object.entries(paths).flatMap(([path, item]) => METHODS.filter((m) => m in obj(item)).map((m) => html`<li><a href="#op-${m}-${anchorOf(path)}"><span class="method method-${m}">${m.toUpperCase()}</span> <code>${path}</code></a></li>`))}
  </ul></nav>
  ${info['description'] ? html`<section class="card" aria-labelledby="about"><h2 id="about">About</h2><pre class="prose">${String(info['description'])}</pre></section>` : raw('')}
  <section aria-labelledby="paths"><h2 id="paths">Paths</h2>
    ${Object.entries(paths).map(([path, item]) => html`<section aria-label="${path}" id="path-${anchorOf(path)}">${METHODS.filter((m) => m in obj(item)).map((m) => operation(path, m, obj(obj(item)[m])))}</section>`)}
  </section>
  <section class="card" aria-labelledby="error-codes"><h2 id="error-codes">Error codes</h2>
    <p class="muted">Every error body has ResultCode (the HTTP status), ResultDescription and error: { code, message, field, hint }.</p>
    <div class="table-wrap"><table class="ref"><thead><tr><th scope="col">Status</th><th scope="col">Codes (error.code)</th><th scope="col">Schema</th></tr></thead><tbody>
      ${errors.map(([name, schema]) => html`<tr><td>${String((obj(obj(obj(schema)['properties'])['ResultCode'])['enum'] as unknown[] | undefined)?.join(', ') ?? '')}</td><td>${errorCodes(obj(schema)).map((code) => html`<code>${code}</code> `)}</td><td><a href="#schema-${anchorOf(name)}">${name}</a></td></tr>`)}
    </tbody></table></div></section>
  <section aria-labelledby="schemas"><h2 id="schemas">Schemas</h2>
    ${Object.entries(schemas).map(([name, schema]) => html`<section class="card" id="schema-${anchorOf(name)}" aria-labelledby="schema-title-${anchorOf(name)}"><h3 id="schema-title-${anchorOf(name)}"><code>${name}</code></h3>
      ${obj(schema)['description'] ? html`<p class="muted">${String(obj(schema)['description'])}</p>` : raw('')}${propertiesTable(obj(schema))}</section>`)}
  </section>`;
}

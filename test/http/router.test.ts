import { describe, expect, it } from 'vitest';
import type { Route } from '../../src/http/route.js';
import { createRouter } from '../../src/http/router.js';
import { ROUTES } from '../../src/http/routes.js';

const docs = () => ({ operation: {} });
const route = (method: Route['method'], path: string, extra: Partial<Route> = {}): Route => ({ method, path, auth: false, billed: false, handle: () => '', docs, ...extra }) as Route;

describe('route table', () => {
  it('matches path parameters, preferring literal segments', () => {
    const router = createRouter([route('GET', '/surveys'), route('GET', '/surveys/{SurveyCode}'), route('GET', '/surveys/count')]);
    expect(router.match(['surveys', 'GSS'])).toMatchObject({ path: { template: '/surveys/{SurveyCode}' }, params: { SurveyCode: 'GSS' } });
    expect(router.match(['surveys', 'count'])).toMatchObject({ path: { template: '/surveys/count' }, params: {} });
    expect(router.match(['surveys'])?.path.template).toBe('/surveys');
    expect(router.match(['surveys', ''])).toBeUndefined();
    expect(router.match(['surveys', 'GSS', 'x'])).toBeUndefined();
    // A segment that is not valid percent-encoding: no literal, a parameter only as undecodable.
    expect(router.match(['surveys', { raw: '%E0%A4%A' }])).toMatchObject({ path: { template: '/surveys/{SurveyCode}' }, params: {}, undecodable: { SurveyCode: '%E0%A4%A' } });
    expect(router.match([{ raw: '%zz' }])).toBeUndefined();
  });

  it('derives Allow and the preflight from the routes of a path', () => {
    const router = createRouter([route('GET', '/tables/{Id}'), route('POST', '/tables', { auth: true, body: 'json' } as Partial<Route>), route('GET', '/tables')]);
    expect(router.match(['tables'])?.path).toMatchObject({ allow: ['POST', 'GET', 'HEAD', 'OPTIONS'], preflight: true });
    expect(router.match(['tables', 'a'])?.path).toMatchObject({ allow: ['GET', 'HEAD'], preflight: false });
  });

  it('refuses a method twice at a path, and malformed templates', () => {
    expect(() => createRouter([route('GET', '/a'), route('GET', '/a')])).toThrow(/GET \/a twice/);
    expect(() => createRouter([route('GET', 'a')])).toThrow(/must start/);
    expect(() => createRouter([route('GET', '/a/%64')])).toThrow(/invalid segment/);
  });

  it('serves the operations of the REST API', () => {
    const router = createRouter(ROUTES);
    expect(router.paths.map(({ template, allow }) => `${template}: ${allow.join(', ')}`)).toEqual([
      '/docs: GET, HEAD',
      '/crosstab: POST, OPTIONS',
      '/surveys: GET, HEAD, OPTIONS',
      '/surveys/{SurveyCode}: GET, HEAD, OPTIONS',
      '/tables: POST, OPTIONS',
      '/tabbooks: POST, OPTIONS',
      '/audiences: POST, GET, HEAD, OPTIONS',
      '/audiences/{AudienceId}: GET, HEAD, PUT, DELETE, OPTIONS',
    ]);
  });
});

import type { Route } from './route.js';

/** The routes of one path template, and what that path answers besides them. */
export interface PathRoutes {
  /** e.g. `/surveys/{SurveyCode}`. */
  readonly template: string;
  readonly routes: readonly Route[];
  /** The Allow header of a 405 (and Access-Control-Allow-Methods of the preflight). */
  readonly allow: readonly string[];
  /**
   * Whether OPTIONS answers the CORS preflight here: some route needs a credential header or
   * a JSON body, which a browser sends only after a preflight.
   */
  readonly preflight: boolean;
}

export interface RouteMatch {
  readonly path: PathRoutes;
  readonly params: Record<string, string>;
  /** Path parameters whose segment is not valid percent-encoded UTF-8, with the segment as sent. */
  readonly undecodable?: Record<string, string>;
}

export interface Router {
  /** Every path template, in table order. */
  readonly paths: readonly PathRoutes[];
  /**
   * The path template matching `segments` (the path below the base path, split on `/` and
   * percent-decoded), if any. A segment that could not be decoded is given as `{ raw }`: it
   * matches no literal segment, and a parameter only as `undecodable`.
   */
  match(segments: readonly (string | { raw: string })[]): RouteMatch | undefined;
}

interface CompiledPath {
  readonly entry: PathRoutes;
  /** A literal segment, or `{ param }` for a `{name}` segment. */
  readonly segments: readonly (string | { param: string })[];
  readonly literals: number;
}

function compileTemplate(template: string): (string | { param: string })[] {
  if (!template.startsWith('/')) throw new Error(`Route path ${template} must start with "/".`);
  return template
    .slice(1)
    .split('/')
    .map((segment) => {
      const param = /^\{([A-Za-z][A-Za-z0-9_]*)\}$/.exec(segment);
      if (param) return { param: param[1] as string };
      if (segment === '' || /[{}%?#]/.test(segment)) throw new Error(`Route path ${template} has an invalid segment ${JSON.stringify(segment)}.`);
      return segment;
    });
}

/**
 * Groups the table by path template. A path matches the template with the most literal
 * segments among those it fits, so `/surveys/count` wins over `/surveys/{SurveyCode}`.
 * Throws on a table with the same method twice at a path (a programming error).
 */
export function createRouter(table: readonly Route[]): Router {
  const byTemplate = new Map<string, Route[]>();
  for (const route of table) {
    const routes = byTemplate.get(route.path) ?? [];
    if (routes.some((other) => other.method === route.method)) throw new Error(`The route table has ${route.method} ${route.path} twice.`);
    routes.push(route);
    byTemplate.set(route.path, routes);
  }
  const compiled: CompiledPath[] = [...byTemplate].map(([template, routes]) => {
    const preflight = routes.some((route) => route.auth || route.body !== undefined);
    const allow = routes.flatMap((route) => (route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]));
    if (preflight) allow.push('OPTIONS');
    const segments = compileTemplate(template);
    return { entry: { template, routes, allow, preflight }, segments, literals: segments.filter((segment) => typeof segment === 'string').length };
  });
  const bySpecificity = [...compiled].sort((a, b) => b.literals - a.literals);
  return {
    paths: compiled.map((path) => path.entry),
    match(segments) {
      for (const candidate of bySpecificity) {
        if (candidate.segments.length !== segments.length) continue;
        const params: Record<string, string> = {};
        const undecodable: Record<string, string> = {};
        const fits = candidate.segments.every((expected, index) => {
          const actual = segments[index] as string | { raw: string };
          if (typeof expected === 'string') return actual === expected;
          if (actual === '') return false;
          if (typeof actual === 'string') params[expected.param] = actual;
          else undecodable[expected.param] = actual.raw;
          return true;
        });
        if (fits) return Object.keys(undecodable).length === 0 ? { path: candidate.entry, params } : { path: candidate.entry, params, undecodable };
      }
      return undefined;
    },
  };
}

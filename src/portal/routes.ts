import type { HandlerRequest, HandlerResponse } from '../http/index.js';
import type { Session } from './sessions.js';

/**
 * Who may reach a portal route, in the order the portal checks:
 * - `static`: anyone, before the session cookie is looked up (the stylesheet and script);
 * - `public`: anyone; the session is known (the sign-in page sends a signed-in user on);
 *   a method the path has no route for gets 405;
 * - `signed-in`: a live session, whose form posts carry its CSRF token;
 * - `account`: a signed-in user whose one-time password has been replaced.
 */
export type RouteAccess = 'static' | 'public' | 'signed-in' | 'account';

/** What a route's handler gets: the request, its session (if any), its form (POST) and the path's captures. */
export interface RouteContext {
  request: HandlerRequest;
  session: Session | undefined;
  /** The POSTed form; undefined for other methods. */
  form: URLSearchParams | undefined;
  query: URLSearchParams;
  cookies: Map<string, string>;
  /** The path's regular expression captures (empty for a plain path). */
  params: string[];
}

/** One page or action of the portal: a method (`*` = any), a path under the mount path, a handler. */
export interface PortalRoute<Context = RouteContext> {
  method: 'GET' | 'POST' | '*';
  path: string | RegExp;
  access: RouteAccess;
  handle(context: Context): Promise<HandlerResponse> | HandlerResponse;
}

/** The captures of `path` if it is the route's path (first route in table order wins). */
export function matchPath(route: PortalRoute<never>, path: string): string[] | undefined {
  if (typeof route.path === 'string') return route.path === path ? [] : undefined;
  return route.path.exec(path)?.slice(1);
}

/** The first route of `access` that takes `method` at `path`, with its captures. */
export function findRoute<Context>(routes: readonly PortalRoute<Context>[], access: RouteAccess, method: string, path: string): { route: PortalRoute<Context>; params: string[] } | undefined {
  for (const route of routes) {
    if (route.access !== access || (route.method !== '*' && route.method !== method)) continue;
    const params = matchPath(route as PortalRoute<never>, path);
    if (params !== undefined) return { route, params };
  }
  return undefined;
}

/** The methods the routes of `access` take at `path` (for a 405's Allow header); empty when none. */
export function allowedMethods(routes: readonly PortalRoute<unknown>[], access: RouteAccess, path: string): string[] {
  return routes.filter((route) => route.access === access && matchPath(route as PortalRoute<never>, path) !== undefined).map((route) => route.method);
}

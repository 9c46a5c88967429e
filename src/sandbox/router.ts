// Matches a method and path against route patterns ('/a/:id/b'); tells "no such path" (404)
// apart from "path exists, other method" (405).
import type { Route, RouteAuth } from './contracts.ts';

export type RouteMatch =
  | { readonly kind: 'found'; readonly route: Route; readonly params: Readonly<Record<string, string>> }
  | { readonly kind: 'not-found' }
  /** `auth` is the kind of the routes at that path, so the 405 takes their error shape. */
  | { readonly kind: 'method-not-allowed'; readonly allowed: readonly string[]; readonly auth: RouteAuth };

interface CompiledRoute {
  readonly route: Route;
  readonly segments: readonly string[];
  /** Parameter segments: fewer wins, so a literal segment beats a parameter. */
  readonly dynamic: number;
}

function split(path: string): string[] {
  return path.split('/').slice(1);
}

function matchSegments(pattern: readonly string[], actual: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    const got = actual[i]!;
    if (want.startsWith(':')) {
      if (got === '') return undefined;
      let value: string;
      try {
        value = decodeURIComponent(got);
      } catch {
        return undefined; // '%E0%A4%A' and the like: not a path any route serves
      }
      params[want.slice(1)] = value;
    } else if (want !== got) {
      return undefined;
    }
  }
  return params;
}

export class Router {
  readonly #routes: CompiledRoute[] = [];

  constructor(routes: Iterable<Route> = []) {
    for (const route of routes) this.add(route);
  }

  add(route: Route): void {
    if (!route.pattern.startsWith('/')) throw new Error(`route pattern must start with '/': ${route.pattern}`);
    const duplicate = this.#routes.find((r) => r.route.method === route.method && r.route.pattern === route.pattern);
    if (duplicate !== undefined) throw new Error(`two routes for ${route.method} ${route.pattern}`);
    const segments = split(route.pattern);
    this.#routes.push({ route, segments, dynamic: segments.filter((s) => s.startsWith(':')).length });
  }

  get routes(): readonly Route[] {
    return this.#routes.map((r) => r.route);
  }

  /** `path` is the URL pathname, still percent-encoded; parameters come back decoded. HEAD is
   * not served: every route answers a JSON body. */
  match(method: string, path: string): RouteMatch {
    const actual = split(path);
    const allowed = new Set<string>();
    let pathAuth: RouteAuth | undefined;
    let best: { route: Route; params: Record<string, string>; dynamic: number } | undefined;
    for (const { route, segments, dynamic } of this.#routes) {
      const params = matchSegments(segments, actual);
      if (params === undefined) continue;
      if (route.method !== method) {
        allowed.add(route.method);
        pathAuth ??= route.auth;
        continue;
      }
      // A literal segment beats a parameter ('/exports/catalog' over '/exports/:section').
      if (best === undefined || dynamic < best.dynamic) best = { route, params, dynamic };
    }
    if (best !== undefined) return { kind: 'found', route: best.route, params: best.params };
    return pathAuth !== undefined
      ? { kind: 'method-not-allowed', allowed: [...allowed].sort(), auth: pathAuth }
      : { kind: 'not-found' };
  }
}

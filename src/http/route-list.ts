/**
 * Every route with its access policy, as registered (`app.registeredRoutes`): the access matrix
 * test compares its table with this list, so a new route cannot go untested. Registered before
 * any route, so that it sees them all.
 */
import type { App } from './types.js';

/** One route as registered: method, URL pattern and access policy. */
export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
  readonly access: unknown;
  /** Refused to requests made with an API key. */
  readonly sessionOnly: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route as registered: method, URL pattern and access policy. */
    registeredRoutes: readonly RegisteredRoute[];
  }
}

export function registerRouteList(app: App): void {
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      routes.push({
        method,
        url: route.url,
        // Read when asked: plugins may still set a route's policy after this hook saw it.
        get access() {
          return route.config?.access ?? 'active';
        },
        get sessionOnly() {
          return route.config?.sessionOnly === true;
        },
      });
    }
  });
  app.decorate('registeredRoutes', routes);
}

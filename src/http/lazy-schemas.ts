/**
 * Fastify compiles every route's validators and response serializers (those of the HEAD twin of
 * each GET route too) before the panel listens: for this API, about a third of a second of
 * start-up spent on code most runs never call. Here each one is compiled when first used
 * instead; a schema is compiled once, then called directly, so requests pay one check.
 *
 * After listening, `compileAll` compiles whatever is left in the background, a few at a time,
 * so a broken schema still shows at start (in the log) and the first requests find them ready.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { setImmediate } from 'node:timers/promises';

// Ajv reads and writes `errors` on the function it compiled; Fastify reads it on the one it got.
type Compiled = ((...args: never[]) => unknown) & { errors?: unknown };

/** The schemas of one app, compiled on first use or by `compileAll`, whichever comes first. */
export class LazySchemas {
  readonly #pending = new Set<() => void>();

  /** A function that compiles `compile()` on its first call and then behaves as its result. */
  lazy<F extends Compiled>(compile: () => F): F {
    let compiled: F | undefined;
    const ensure = (): F => {
      if (compiled === undefined) {
        compiled = compile();
        this.#pending.delete(ensure);
      }
      return compiled;
    };
    this.#pending.add(ensure);
    const wrapper = function (this: unknown, ...args: Parameters<F>): ReturnType<F> {
      const fn = ensure();
      const result = fn.apply(this, args) as ReturnType<F>;
      wrapper.errors = fn.errors;
      return result;
    } as unknown as F;
    return wrapper;
  }

  /** Fastify's own serializer factory (fast-json-stringify), each serializer compiled lazily. */
  serializerFactory(): ReturnType<typeof SerializerSelector> {
    const eager = SerializerSelector();
    return (externalSchemas, options) => {
      const compile = eager(externalSchemas, options);
      return (route) => this.lazy(() => compile(route));
    };
  }

  /**
   * Compiles every schema not compiled yet, yielding to the event loop between a few. Failures
   * go to `onError` (the route's requests then fail the same way until the schema is fixed).
   */
  async compileAll(onError: (error: unknown) => void): Promise<number> {
    let count = 0;
    for (const next of this.#pending) {
      this.#pending.delete(next);
      try {
        next();
      } catch (error) {
        onError(error);
      }
      count++;
      if (count % 8 === 0) await setImmediate();
    }
    return count;
  }

  /** Forgets what was never compiled (the app closed). */
  clear(): void {
    this.#pending.clear();
  }
}

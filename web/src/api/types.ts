/**
 * Names for the shapes `schema.d.ts` declares, so a hook says which answer or body it means
 * instead of spelling the way through the generated types to it. `AnswerData<'/api/users', 'get'>`
 * is what the envelope (`{ message, data }`, docs/api.md) of `GET /api/users` carries;
 * `RequestBody<'/api/users', 'post'>` is what `POST /api/users` takes. A path or method the API
 * does not have is a type error, as it is for the client itself.
 */
import type { paths } from './schema';

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The operation of a path and method, as the generated types declare it. */
type Operation<P extends keyof paths, M extends Method> =
  paths[P] extends Readonly<Partial<Record<M, infer O>>> ? NonNullable<O> : never;

/** The JSON body of an answer (status 200 unless named): the whole envelope. */
export type Answer<P extends keyof paths, M extends Method, S extends number = 200> =
  Operation<P, M> extends {
    readonly responses: Readonly<Record<S, { readonly content: { 'application/json': infer B } }>>;
  }
    ? B
    : never;

/** The `data` of an answer's envelope: what `unwrapData` resolves to. */
export type AnswerData<P extends keyof paths, M extends Method, S extends number = 200> =
  Answer<P, M, S> extends { readonly data: infer D } ? D : never;

/** The JSON body a request sends. */
export type RequestBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends {
    readonly requestBody?: { readonly content: { 'application/json': infer B } };
  }
    ? B
    : never;

/** The query parameters of a request, when it takes any. */
export type Query<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { readonly parameters: { readonly query?: infer Q } }
    ? NonNullable<Q>
    : never;

/**
 * One POST of a webhook delivery: to the checked address only (the URL's host is used for the
 * Host header and TLS, never resolved again), no redirect followed, a time limit, and no more of
 * the answer read than a short excerpt.
 */
import http from 'node:http';
import https from 'node:https';
import { pinnedLookup, type Target } from './url-guard.js';

/** Characters of the answer's body kept, in the delivery's error, when it was not a 2xx. */
export const EXCERPT_CHARS = 200;
/** Bytes of the answer read at most (enough for the excerpt). */
const EXCERPT_BYTES = 1024;

export interface SendResult {
  /** The answer's HTTP status; null when none came. */
  readonly status: number | null;
  /** Why it did not succeed (no 2xx), or null. */
  readonly error: string | null;
}

export function send(
  target: Target,
  headers: Readonly<Record<string, string>>,
  body: string,
  options: { readonly timeoutMs: number; readonly signal: AbortSignal },
): Promise<SendResult> {
  const { url, address } = target;
  const request = (url.protocol === 'https:' ? https : http).request;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const req = request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      lookup: pinnedLookup(address),
      // A connection of its own: an agent's pooled socket may lead to another address.
      agent: false,
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ status: null, error: `No answer within ${options.timeoutMs / 1000} s` });
    }, options.timeoutMs);
    const onAbort = () => {
      req.destroy();
      finish({ status: null, error: 'The panel stopped during the attempt' });
    };
    options.signal.addEventListener('abort', onAbort);
    req.on('error', (error: NodeJS.ErrnoException) => {
      finish({ status: null, error: `Could not deliver: ${error.code ?? error.message}` });
    });
    req.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        response.resume();
        response.destroy();
        finish({ status, error: null });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        response.destroy();
        const excerpt = excerptOf(Buffer.concat(chunks).toString('utf8'));
        const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
        finish({
          status,
          error: `Answered ${status}${redirect}${excerpt === '' ? '' : `: ${excerpt}`}`,
        });
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= EXCERPT_BYTES) done();
      });
      response.on('end', done);
      response.on('error', done);
    });
    req.end(body);
  });
}

/** The start of an answer as one line of printable text. */
function excerptOf(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}…` : line;
}

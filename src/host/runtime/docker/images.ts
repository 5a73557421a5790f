/**
 * The docker runtime's images: whether the engine has one (and its registry digest), and pulls
 * through the Engine API (`POST /images/create`, as `docker pull` does), with the registry's
 * credentials in `X-Registry-Auth` when an admin set some. The engine answers a pull's request
 * only once the registry has answered for the manifest, so a refusal (unauthorized, not found,
 * unreachable) is an error of the request itself; the download that follows is a stream of JSON
 * lines, read here into {@link PullProgress}. Closing the request (the abort signal) ends the
 * pull in the engine.
 */
import type Docker from 'dockerode';
import { DOCKER_HUB, parseImage } from '../../../domain/image.js';
import {
  ImagePullError,
  RuntimeUnavailableError,
  StartRefusedError,
  type ImageStore,
  type PullProgress,
} from '../runtime.js';
import type { RegistryAuth } from '../../../domain/registry.js';

/** How Docker Hub is named in credentials the engine is given (as `docker login` stores it). */
const HUB_SERVER_ADDRESS = 'https://index.docker.io/v1/';

/** One line of the engine's pull stream. */
interface PullEvent {
  readonly status?: string;
  readonly id?: string;
  readonly progressDetail?: { readonly current?: number; readonly total?: number };
  readonly error?: string;
  readonly errorDetail?: { readonly message?: string };
}

/** The HTTP status the engine answered with, if it answered. */
const statusOf = (error: unknown): number | undefined =>
  (error as { statusCode?: unknown } | null)?.statusCode as number | undefined;

/**
 * What the engine said about a failed pull, without dockerode's "(HTTP code 500) server error -"
 * prefix: the registry's own words ("unauthorized: authentication required", "manifest
 * unknown", "dial tcp …: connection refused").
 */
export function pullReason(error: unknown): string {
  const json = (error as { json?: unknown } | null)?.json;
  if (json !== null && typeof json === 'object' && 'message' in json) {
    return String(json.message).trim();
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^\(HTTP code \d+\)[^-]*- /, '').trim();
}

/** The `sha256:…` of the image's registry manifest among its RepoDigests, preferring its own repository's. */
function digestAmong(repoDigests: readonly string[] | undefined, image: string): string | null {
  const { repository } = parseImage(image);
  const digests = (repoDigests ?? []).map((entry) => {
    const at = entry.lastIndexOf('@');
    return { repository: entry.slice(0, at), digest: entry.slice(at + 1) };
  });
  const own = digests.find((entry) => entry.repository === repository) ?? digests[0];
  return own?.digest.startsWith('sha256:') === true ? own.digest : null;
}

/**
 * The image store of the engine `api` (short calls) and `streams` (the pull, with no time limit);
 * `call` (short calls) and `open` (a pull's request, which waits for the registry; default
 * `call`) turn a connection failure into {@link RuntimeUnavailableError}.
 */
export function engineImages(
  api: Docker,
  streams: Docker,
  call: <T>(task: () => Promise<T>) => Promise<T>,
  open: <T>(task: () => Promise<T>) => Promise<T> = call,
): ImageStore {
  return {
    async find(image) {
      try {
        const info = await call(() => api.getImage(image).inspect());
        return { digest: digestAmong(info.RepoDigests, image) };
      } catch (error) {
        if (statusOf(error) === 404) return null;
        // Any other answer about this image (a reference the engine will not take): refused.
        if (statusOf(error) !== undefined)
          throw new StartRefusedError(
            `the Docker host refused image ${image}: ${pullReason(error)}`,
          );
        throw error;
      }
    },

    async pull(image, { auth, signal, onProgress }) {
      const { repository, version } = parseImage(image);
      let stream: NodeJS.ReadableStream;
      try {
        stream = await open(() =>
          streams.createImage({
            fromImage: repository,
            tag: version,
            abortSignal: signal,
            ...(auth === null ? {} : { authconfig: authConfig(auth) }),
          }),
        );
      } catch (error) {
        if (error instanceof RuntimeUnavailableError) throw error;
        throw new ImagePullError(pullReason(error), { cause: error });
      }
      return { done: follow(stream, onProgress) };
    },
  };
}

/** The credentials as the engine takes them in `X-Registry-Auth`. */
function authConfig(auth: RegistryAuth) {
  return {
    username: auth.username,
    password: auth.password,
    serveraddress: auth.registry === DOCKER_HUB ? HUB_SERVER_ADDRESS : auth.registry,
  };
}

/**
 * Reads the engine's pull stream to its end: progress as it goes, then the digest it names
 * (null when it names none). An error line, or the stream breaking off, is the pull's failure.
 */
function follow(stream: NodeJS.ReadableStream, onProgress: (progress: PullProgress) => void) {
  return new Promise<string | null>((resolve, reject) => {
    const layers = new Map<string, { current: number; total: number }>();
    let extracting = false;
    let digest: string | null = null;
    let failure: string | null = null;
    let pending = '';
    const report = () => {
      let downloaded = 0;
      let total = 0;
      for (const layer of layers.values()) {
        downloaded += Math.min(layer.current, layer.total);
        total += layer.total;
      }
      onProgress({ downloaded, total, extracting });
    };
    const take = (event: PullEvent) => {
      if (event.error !== undefined || event.errorDetail?.message !== undefined) {
        failure ??= event.errorDetail?.message ?? event.error ?? 'the pull failed';
        return;
      }
      const status = event.status ?? '';
      const found = /^Digest: (sha256:[a-f0-9]{64})$/.exec(status);
      if (found) digest = found[1] ?? null;
      if (event.id === undefined) return;
      const layer = layers.get(event.id);
      const total = event.progressDetail?.total ?? 0;
      if (status === 'Downloading' && total > 0) {
        layers.set(event.id, { current: event.progressDetail?.current ?? 0, total });
        report();
      } else if (
        layer !== undefined &&
        (status === 'Download complete' || status === 'Pull complete')
      ) {
        layer.current = layer.total;
        report();
      } else if (status === 'Extracting' && !extracting) {
        extracting = true;
        report();
      }
    };
    stream.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      let newline: number;
      while ((newline = pending.indexOf('\n')) !== -1) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (line === '') continue;
        try {
          take(JSON.parse(line) as PullEvent);
        } catch {
          // A line the engine's format does not have: not the panel's to fail on.
        }
      }
    });
    let settled = false;
    const finish = (error: unknown) => {
      if (settled) return;
      settled = true;
      if (failure !== null) reject(new ImagePullError(failure));
      else if (error !== undefined) reject(new ImagePullError(pullReason(error), { cause: error }));
      else resolve(digest);
    };
    stream.on('error', finish);
    stream.on('end', () => {
      finish(undefined);
    });
    stream.on('close', () => {
      // Closed without its end: the connection broke off, or the pull was cancelled.
      finish(settled ? undefined : new Error('the engine closed the pull before its end'));
    });
  });
}

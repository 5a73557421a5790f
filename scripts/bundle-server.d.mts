/** Types of bundle-server.mjs, for the test that builds a bundle as it does. */
import type { BuildOptions } from 'esbuild';

/** `external`: the packages left out (by default the panel's: native addons and the like). */
export declare function bundleOptions(
  entry: string,
  outfile: string,
  external?: readonly string[],
): BuildOptions;

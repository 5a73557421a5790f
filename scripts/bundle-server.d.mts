/** Types of bundle-server.mjs, for the test that builds a bundle as it does. */
import type { BuildOptions } from 'esbuild';

export declare function bundleOptions(entry: string, outfile: string): BuildOptions;

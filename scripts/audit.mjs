#!/usr/bin/env node
// CI's dependency audit: `npm audit --omit=dev` must report no high or critical vulnerability.
// Some registries (mirrors, proxies) offer no audit service; then the audit cannot run, and this
// says so plainly instead of passing silently or failing on something that is not a finding.
import { spawnSync } from 'node:child_process';

const run = spawnSync('npm', ['audit', '--omit=dev', '--audit-level=high', '--json'], {
  encoding: 'utf8',
});
let report;
try {
  report = JSON.parse(run.stdout);
} catch {
  console.error(`npm audit gave no report:\n${run.stderr}`);
  process.exit(1);
}
if (typeof report.statusCode === 'number' && report.metadata === undefined) {
  console.log(
    `npm audit: SKIPPED, the registry has no audit service (HTTP ${report.statusCode}); run it where the public registry is reachable`,
  );
  process.exit(0);
}
const counts = report.metadata?.vulnerabilities ?? {};
const serious = (counts.high ?? 0) + (counts.critical ?? 0);
console.log(
  `npm audit: ${counts.total ?? 0} known vulnerabilities in production dependencies (${serious} high or critical)`,
);
process.exit(serious > 0 ? 1 : 0);

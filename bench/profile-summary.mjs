// Summarises a V8 CPU profile (from `node --cpu-prof`, or `npm run bench -- --cpu-prof <dir>`):
// where the time went, by package and by function, self time only.
//   node bench/profile-summary.mjs <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';
import process from 'node:process';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: profile-summary.mjs <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));

// Self time per node: the sampled intervals attributed to it.
const selfUs = new Map();
const { samples, timeDeltas } = profile;
for (let i = 0; i < samples.length; i++) {
  selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + (timeDeltas[i] ?? 0));
}
const totalUs = [...selfUs.values()].reduce((sum, us) => sum + us, 0);

function packageOf(url) {
  if (!url) return '(native or V8)';
  if (url.startsWith('node:')) return 'node core';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? '?');
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return 'panel (dist/)';
  return url;
}

const byPackage = new Map();
const byFunction = new Map();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (us === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const pkg = ['(idle)', '(program)', '(garbage collector)'].includes(functionName)
    ? functionName
    : packageOf(url);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  const where = url ? `${url.replace(/^.*node_modules\//, '')}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
}

const show = (title, map) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = ((us / totalUs) * 100).toFixed(1).padStart(5);
    process.stdout.write(`${share} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}\n`);
  }
};
process.stdout.write(`${file}: ${(totalUs / 1e6).toFixed(2)} s sampled\n`);
show('self time by package', byPackage);
show('self time by function', byFunction);

/**
 * Whether a page was loaded in a way that sends what is typed into it across a network in clear:
 * over `http:` from a host that is not this machine. Loopback (`localhost`, 127.0.0.0/8, `[::1]`)
 * never leaves the machine, so a panel opened there, or through an SSH tunnel, is not flagged.
 * Takes the parts of `window.location` it reads, so that it is decided without a browser.
 */
export function connectionIsUnencrypted(location: {
  readonly protocol: string;
  readonly hostname: string;
}): boolean {
  if (location.protocol !== 'http:') return false;
  const host = location.hostname.toLowerCase().replace(/\.$/, '');
  const loopback =
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === '[::1]' ||
    host === '::1';
  return !loopback;
}

/** The address an SFTP client connects to, as the server's Files tab shows it. */

/**
 * `sftp://<username>.<server>@<host>:<port>` (docs/sftp.md): the SFTP username is the panel
 * user's name and the server's, joined by a dot. `host` is the name the browser reached the panel
 * by (`location.hostname`); an IPv6 address gets its brackets.
 */
export function sftpAddress(username: string, server: string, host: string, port: number): string {
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const user = `${encodeURIComponent(username)}.${encodeURIComponent(server)}`;
  return `sftp://${user}@${bracketed}:${port}`;
}

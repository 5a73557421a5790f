/**
 * Follows a single-use download link through a hidden `<a download>`: the browser streams the
 * bytes to disk, the page stays where it is and never holds them.
 */
export function navigateToDownload(url: string): void {
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = '';
  anchor.hidden = true;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}

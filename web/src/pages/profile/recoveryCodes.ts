/** The recovery codes as a text file: what they are, then one per line. */
export function recoveryCodesText(username: string, codes: readonly string[], at: Date): string {
  return [
    `Game panel recovery codes for ${username}, made ${at.toISOString()}`,
    'Each code signs in once in place of the authenticator app. Keep them somewhere safe.',
    '',
    ...codes,
    '',
  ].join('\n');
}

/**
 * The QR code's SVG as an image address: shown through `<img>`, never put into the page's markup,
 * so nothing in it can run (the UI's policy allows `data:` images).
 */
export const svgImageUrl = (svg: string): string =>
  `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;

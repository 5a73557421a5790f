/**
 * Where a provider button leads: the provider's login URL, asking to come back to this origin's
 * sign-in page, which reads the token from the fragment (docs/api.md, OpenID Connect).
 */
export function providerLoginHref(loginUrl: string, origin: string): string {
  const url = new URL(loginUrl, origin);
  url.searchParams.set('redirect', `${origin}/sign-in`);
  return url.href;
}

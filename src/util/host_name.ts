/**
 * Host names as the service compares them: the configuration's (`PUBLIC_ORIGIN`,
 * `ALLOWED_HOSTS`) and a request's (`Host`, `X-Forwarded-Host`) normalised the same way.
 *
 * @module
 */

/**
 * The host name of `host[:port]` as the URL parser normalises it (lower case, IPv4 in dotted
 * form, IPv6 bracketed and compressed, international names in punycode), without the trailing
 * dot of a fully qualified name (`lore.example.org.` names the same host); undefined when
 * `authority` is not a plain host with an optional port.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(hostNameOf("Lore.Example.org.:8080"), "lore.example.org");
 * assert.equal(hostNameOf("[0:0::1]"), "[::1]");
 * assert.equal(hostNameOf("user@evil.example"), undefined);
 * ```
 */
export function hostNameOf(authority: string): string | undefined {
  // user info, a path, a query or a fragment would move what the URL parser calls the host
  if (!authority || /[@/?#\\\s%]/.test(authority)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${authority}/`);
  } catch {
    return undefined;
  }
  return withoutTrailingDot(url.hostname) || undefined;
}

/**
 * `hostname` (already normalised by the URL parser, e.g. `url.hostname`) without the trailing
 * dot of a fully qualified name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(withoutTrailingDot("lore.example.org."), "lore.example.org");
 * assert.equal(withoutTrailingDot("[::1]"), "[::1]");
 * ```
 */
export function withoutTrailingDot(hostname: string): string {
  return hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
}

/**
 * Whether a normalised host name (see {@linkcode hostNameOf}) can never be a name someone else
 * points at this machine: an IP literal (v4, or bracketed v6), `localhost`, or a name under
 * `.localhost`, which browsers and resolvers keep on the loopback interface (RFC 6761). A page
 * on such a host is not another site that DNS rebinding could move onto this service.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(alwaysAcceptedHost("192.168.1.20"), true);
 * assert.equal(alwaysAcceptedHost("[::1]"), true);
 * assert.equal(alwaysAcceptedHost("app.localhost"), true);
 * assert.equal(alwaysAcceptedHost("localhost.attacker.example"), false);
 * ```
 */
export function alwaysAcceptedHost(hostname: string): boolean {
  return hostname === "localhost" || hostname.endsWith(".localhost") ||
    hostname.startsWith("[") || IPV4.test(hostname);
}

/** The URL parser's dotted form of an IPv4 address (it turns `0x7f.1` into `127.0.0.1`). */
const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/**
 * Whether a listening address (`HOST`) takes connections from this machine only: `localhost`,
 * 127.0.0.0/8 or `::1` (bracketed or not). `0.0.0.0`, `::` and any other address or name are
 * reachable from other machines.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(loopbackAddress("127.0.0.1"), true);
 * assert.equal(loopbackAddress("[::1]"), true);
 * assert.equal(loopbackAddress("0.0.0.0"), false);
 * assert.equal(loopbackAddress("192.168.1.20"), false);
 * ```
 */
export function loopbackAddress(address: string): boolean {
  const host = address.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Our own host only: a request is answered only when the host it names is one this service
 * answers to. A browser decides what is "the same origin" by the name in the address bar, never
 * by the address it connects to, so a page on `attacker.example`, whose owner points that name
 * at 127.0.0.1 or a LAN address once the page has loaded (DNS rebinding), calls this service as
 * its own origin: without this rule its script reads and writes private lore with whatever the
 * service grants a browser (zero-login, `CORE_TOKEN`). The `Host` it sends is the attacker's
 * name, so that is what is checked, before any work.
 *
 * Accepted: IP literals (v4, bracketed v6) and loopback names (`localhost`, `*.localhost`),
 * which nobody can point elsewhere; `PUBLIC_ORIGIN`'s host; `ALLOWED_HOSTS`. Any port. Behind a
 * trusted proxy (`TRUST_PROXY`) the forwarded host must be accepted too, not instead: the
 * service's own port may be reachable besides the proxy's, and there a rebinding page's script
 * can add an `X-Forwarded-Host` of its choosing (a same-origin request needs no preflight),
 * but cannot change the `Host` its browser sends.
 *
 * @module
 */
import { alwaysAcceptedHost, hostNameOf, withoutTrailingDot } from "../util/host_name.ts";
import { ApiError, invalidRequest } from "./errors.ts";

/** What the host rule reads of the configuration. */
export interface HostSettings {
  /** `PUBLIC_ORIGIN`, e.g. `https://lore.example.org`. */
  PUBLIC_ORIGIN?: string;
  /** `ALLOWED_HOSTS`, normalised host names. */
  ALLOWED_HOSTS: readonly string[];
  TRUST_PROXY: boolean;
}

/** The verdict on a request's host: accepted, or the error to answer and the host refused. */
export type HostVerdict = { ok: true } | { ok: false; error: ApiError; host: string };

const ACCEPTED: HostVerdict = { ok: true };

/**
 * The host rule of a configuration (see the module notes): `check` decides on a request whose
 * URL `requestUrl` has already validated.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const rule = hostRule({ ALLOWED_HOSTS: ["lore.lan"], TRUST_PROXY: false });
 * const verdict = (url: string) => rule.check(new Request(url), new URL(url));
 * assert.equal(verdict("http://lore.lan:8080/api/lore").ok, true);
 * assert.equal(verdict("http://[::1]:8080/").ok, true);
 * const refused = verdict("http://attacker.example:8080/api/lore");
 * assert.equal(refused.ok, false);
 * assert.equal(!refused.ok && refused.error.status, 421);
 * ```
 */
export function hostRule(settings: HostSettings): { check(req: Request, url: URL): HostVerdict } {
  const named = new Set(namedHosts(settings));
  const accepted = (hostname: string) => named.has(hostname) || alwaysAcceptedHost(hostname);
  return {
    check(req, url) {
      // the request's own authority: its Host, or an absolute-form target's (RFC 9112 §3.2.2)
      const own = withoutTrailingDot(url.hostname);
      if (!accepted(own)) return refused(url.host);
      if (settings.TRUST_PROXY) {
        const forwarded = forwardedHost(req);
        if (forwarded !== undefined) {
          const name = hostNameOf(forwarded);
          if (name === undefined) {
            return {
              ok: false,
              error: invalidRequest(
                "The X-Forwarded-Host header is not a valid host name with an optional port",
              ),
              host: forwarded.slice(0, 300),
            };
          }
          if (!accepted(name)) return refused(forwarded);
        }
      }
      return ACCEPTED;
    },
  };
}

/**
 * The host names a configuration names for the rule: `PUBLIC_ORIGIN`'s host first, then
 * `ALLOWED_HOSTS`, each once. IP literals and loopback names are accepted besides them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const settings = { PUBLIC_ORIGIN: "https://Lore.Example.org.", ALLOWED_HOSTS: ["lore.lan"] };
 * assert.deepEqual(namedHosts(settings), ["lore.example.org", "lore.lan"]);
 * assert.deepEqual(namedHosts({ ALLOWED_HOSTS: [] }), []);
 * ```
 */
export function namedHosts(
  settings: Pick<HostSettings, "PUBLIC_ORIGIN" | "ALLOWED_HOSTS">,
): string[] {
  const own = settings.PUBLIC_ORIGIN
    ? [withoutTrailingDot(new URL(settings.PUBLIC_ORIGIN).hostname)]
    : [];
  return [...new Set([...own, ...settings.ALLOWED_HOSTS])];
}

function refused(host: string): HostVerdict {
  return {
    ok: false,
    error: new ApiError(
      421,
      "MISDIRECTED_REQUEST",
      "This service does not answer to this host name; its operator can allow it with " +
        "ALLOWED_HOSTS or PUBLIC_ORIGIN",
    ),
    host: host.slice(0, 300),
  };
}

/** The first `X-Forwarded-Host` entry (the host the client used), when there is one. */
function forwardedHost(req: Request): string | undefined {
  return req.headers.get("x-forwarded-host")?.split(",")[0].trim() || undefined;
}

/**
 * The origin the browser used to reach us, normalised as browsers write `Origin` (lower case, no
 * default port). Its host is the one the request names: its own (see `requestUrl`), or behind a
 * trusted proxy the forwarded host. Its scheme is `PUBLIC_ORIGIN`'s when that host is
 * `PUBLIC_ORIGIN`'s (without a port, or with the same one): browsers reach that name the way the
 * operator says, whatever a hop in between reports. Otherwise, behind a trusted proxy,
 * `X-Forwarded-Proto`'s, also without a forwarded host (a load balancer that keeps `Host`);
 * else the connection's own. Meant for requests whose host {@linkcode hostRule} accepted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const url = new URL("http://127.0.0.1:8080/api");
 * assert.equal(requestOrigin(new Request(url), url, false), "http://127.0.0.1:8080");
 * const proxied = new Request(url, {
 *   headers: { "x-forwarded-host": "Lore.Example.org:443", "x-forwarded-proto": "https" },
 * });
 * assert.equal(requestOrigin(proxied, url, true), "https://lore.example.org");
 * // the public origin's host, reached over a hop that says http: the public origin's scheme
 * const named = new URL("http://lore.example.org/api");
 * assert.equal(
 *   requestOrigin(new Request(named), named, false, "https://lore.example.org"),
 *   "https://lore.example.org",
 * );
 * ```
 */
export function requestOrigin(
  req: Request,
  url: URL,
  trustProxy: boolean,
  publicOrigin?: string,
): string {
  let scheme = url.protocol.slice(0, -1);
  let host = url.host;
  if (trustProxy) {
    const forwarded = forwardedHost(req);
    if (forwarded !== undefined && hostNameOf(forwarded) !== undefined) host = forwarded;
    const proto = req.headers.get("x-forwarded-proto")?.split(",")[0].trim().toLowerCase();
    if (proto === "https" || proto === "http") scheme = proto;
  }
  const key = `${scheme}://${host} ${publicOrigin ?? ""}`;
  let origin = knownOrigins.get(key);
  if (origin === undefined) {
    origin = originOf(scheme, host, publicOrigin);
    // nearly every request repeats one of a few hosts: parsing them again costs every page
    if (knownOrigins.size >= MAX_KNOWN_ORIGINS) knownOrigins.clear();
    knownOrigins.set(key, origin);
  }
  return origin;
}

const MAX_KNOWN_ORIGINS = 256;
const knownOrigins = new Map<string, string>();

/** The origin {@linkcode requestOrigin} answers for a scheme and host, worked out anew. */
function originOf(scheme: string, host: string, publicOrigin: string | undefined): string {
  const named = new URL(`${scheme}://${host}`);
  if (publicOrigin !== undefined) {
    const pub = new URL(publicOrigin);
    const port = /:(\d+)$/.exec(host)?.[1];
    const samePort = port === undefined ||
      Number(port) === Number(pub.port || (pub.protocol === "https:" ? 443 : 80));
    if (samePort && withoutTrailingDot(named.hostname) === withoutTrailingDot(pub.hostname)) {
      // the name as the browser wrote it (a trailing dot is part of its `Origin`)
      return new URL(`${pub.protocol}//${named.hostname}${pub.port ? `:${pub.port}` : ""}`).origin;
    }
  }
  return named.origin;
}

/**
 * Who the client of a request is: its address for the request log, and its rate-limit key (an
 * IPv4 address or an IPv6 /64), read from the TCP peer or, behind a trusted proxy, from the
 * `X-Forwarded-For` entry that proxy appended.
 *
 * @module
 */

/** Options of {@linkcode clientKey}: what the server knows about the connection. */
export interface ClientInfo {
  /** The TCP peer address, e.g. `info.remoteAddr.hostname` in `Deno.serve`. */
  remoteAddr?: string;
}

/**
 * The rate-limit identity of a request's client: its IPv4 address, or its IPv6 /64 prefix (one
 * host usually owns a whole /64 and could otherwise rotate through it). IPv4-mapped IPv6 peers
 * (`::ffff:a.b.c.d` on a dual-stack socket) count as IPv4.
 *
 * With `trustProxy`, the client is read from `X-Forwarded-For`: the **rightmost** entry, which the
 * trusted proxy appended itself. Entries left of it arrive from the client and are forgeable (a
 * proxy that appends keeps whatever the client sent), so keying on the leftmost one would let an
 * attacker pick a new identity per request. Pass a number instead of `true` when `n` trusted
 * proxies are chained (the `n`-th entry from the right is used). Without a usable entry, or
 * without `trustProxy`, the TCP peer address is used; without that, the shared key `"unknown"`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://x/", {
 *   headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.7" },
 * });
 * assert.equal(clientKey(req, { remoteAddr: "10.0.0.2" }, false), "10.0.0.2");
 * assert.equal(clientKey(req, { remoteAddr: "10.0.0.2" }, true), "203.0.113.7"); // the proxy's entry
 * assert.equal(clientKey(req, { remoteAddr: "2001:db8:1:2:3:4:5:6" }, false), "2001:db8:1:2::/64");
 * ```
 */
export function clientKey(req: Request, info: ClientInfo, trustProxy: boolean | number): string {
  const address = clientAddress(req, info, trustProxy);
  return (address !== undefined && normaliseAddress(address)) || "unknown";
}

/**
 * The client's own address under the rules of {@linkcode clientKey} (the trusted proxy's
 * `X-Forwarded-For` entry when it is an IP address, else the TCP peer), whole: for the request
 * log, where tools that block addresses read it. Undefined when there is none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://x/", { headers: { "x-forwarded-for": "2001:db8::7" } });
 * assert.equal(clientAddress(req, { remoteAddr: "10.0.0.2" }, true), "2001:db8::7");
 * assert.equal(clientAddress(req, { remoteAddr: "10.0.0.2" }, false), "10.0.0.2");
 * ```
 */
export function clientAddress(
  req: Request,
  info: ClientInfo,
  trustProxy: boolean | number,
): string | undefined {
  const hops = trustProxy === true ? 1 : typeof trustProxy === "number" ? trustProxy : 0;
  if (Number.isSafeInteger(hops) && hops > 0) {
    const xff = req.headers.get("x-forwarded-for");
    if (xff !== null && xff.length <= 4096) {
      const entries = xff.split(",");
      const entry = entries[entries.length - hops];
      const address = entry === undefined ? null : stripPort(entry.trim());
      if (address !== null && normaliseAddress(address) !== null) return address;
    }
  }
  return info.remoteAddr;
}

/** Removes a port from `1.2.3.4:80` or `[::1]:80` (some proxies add one); IPv6 stays as is. */
function stripPort(s: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(s);
  if (bracketed) return bracketed[1];
  const v4 = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(s);
  return v4 ? v4[1] : s;
}

/** The canonical key for an address, or null if it is not an IP address. */
function normaliseAddress(addr: string): string | null {
  if (addr.includes(".") && !addr.includes(":")) return parseIPv4(addr);
  const groups = parseIPv6(addr);
  if (!groups) return null;
  // ::ffff:a.b.c.d is an IPv4 client on a dual-stack socket; its /64 would be every IPv4 client.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join(".");
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/** Dotted-quad IPv4 in canonical form; leading zeros are refused (some parsers read octal). */
function parseIPv4(s: string): string | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  for (const p of parts) {
    if (!/^(?:0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return null;
  }
  return parts.join(".");
}

/** The eight 16-bit groups of an IPv6 address (zone id ignored), or null. */
function parseIPv6(s: string): number[] | null {
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (s.length === 0 || s.length > 45) return null;
  let tail: number[] = [];
  // An embedded IPv4 address (`::ffff:1.2.3.4`) supplies the last two groups.
  const lastColon = s.lastIndexOf(":");
  if (lastColon < 0) return null;
  if (s.includes(".", lastColon)) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (!v4) return null;
    const [a, b, c, d] = v4.split(".").map(Number);
    tail = [(a << 8) | b, (c << 8) | d];
    s = s.slice(0, lastColon);
    if (s.endsWith(":")) s += ":"; // "::1.2.3.4" → "::"
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    for (const g of part.split(":")) {
      if (!/^[0-9A-Fa-f]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  if (!head || !rest) return null;
  const want = 8 - tail.length;
  if (halves.length === 1) {
    return head.length === want ? [...head, ...tail] : null;
  }
  const missing = want - head.length - rest.length;
  if (missing < 1) return null;
  return [...head, ...new Array(missing).fill(0), ...rest, ...tail];
}

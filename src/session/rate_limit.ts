/**
 * Per-client rate limiting for login, register and connect: a fixed window per key that opens at
 * the key's first request, in a bounded table. Memory stays bounded under a flood of distinct
 * keys, and the eviction policy is chosen so that a flood does not erase a lockout.
 *
 * @module
 */

/** Options of {@linkcode createRateLimiter}. */
export interface RateLimiterOptions {
  /** Requests allowed per key and window. */
  limit: number;
  /** Window length; a key's window opens at its first request after the previous one closed. */
  windowMs: number;
  /** Most keys tracked at once. */
  maxKeys: number;
  /** Clock in ms; default `Date.now`. */
  now?: () => number;
}

/** The verdict for one request. */
export interface RateLimitResult {
  /** Whether the request may proceed (answer 429 otherwise). */
  allowed: boolean;
  /** Whole seconds until this key may try again (≥ 1 when refused, 0 when allowed). */
  retryAfterSeconds: number;
  /** Requests left in the current window after this one. */
  remaining: number;
}

/** A limiter from {@linkcode createRateLimiter}. */
export interface RateLimiter {
  /** Counts one request for `key` (only if it is allowed) and says whether it may proceed. */
  check(key: string): RateLimitResult;
  /** Keys currently tracked (at most `maxKeys`). */
  readonly size: number;
}

/** How many blocked keys one insertion may skip over before evicting one anyway. */
const SECOND_CHANCES = 8;

/**
 * Creates a limiter: at most `limit` requests per key in each window (so at most `2 × limit` in
 * any span of `windowMs` straddling two windows). Refused requests do not count, so a client that
 * waits `retryAfterSeconds` always gets through.
 *
 * When the table is full, the least recently used key is evicted, except that a key which is
 * currently blocked gets a second chance (moved to the recent end) instead, up to 8 times per
 * insertion. Why this does not let an attacker reset their own window cheaply: every request,
 * refused or not, refreshes the key's recency, so pushing it out takes `maxKeys` requests from
 * other keys, i.e. `maxKeys` distinct addresses (IPv6 counted per /64 by {@linkcode clientKey}),
 * and anyone with that many addresses already has `maxKeys × limit` attempts without evicting
 * anything. A locked-out key that goes quiet is skipped over rather than forgotten, so ordinary
 * traffic from other clients does not lift a lockout either; only a table full of blocked keys
 * forces one out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * let now = 0;
 * const limiter = createRateLimiter({ limit: 2, windowMs: 60_000, maxKeys: 100, now: () => now });
 * assert.equal(limiter.check("203.0.113.7").allowed, true);
 * assert.equal(limiter.check("203.0.113.7").allowed, true);
 * assert.deepEqual(limiter.check("203.0.113.7"), {
 *   allowed: false,
 *   retryAfterSeconds: 60,
 *   remaining: 0,
 * });
 * now = 60_000; // the key's window has closed
 * assert.equal(limiter.check("203.0.113.7").allowed, true);
 * ```
 */
export function createRateLimiter(opts: RateLimiterOptions): RateLimiter {
  const { limit, windowMs, maxKeys } = opts;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError("rate limiter: limit must be a positive integer");
  }
  if (!Number.isFinite(windowMs) || windowMs <= 0) {
    throw new RangeError("rate limiter: windowMs must be a positive number");
  }
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
    throw new RangeError("rate limiter: maxKeys must be a positive integer");
  }
  const now = opts.now ?? (() => Date.now());
  // Map iteration order is insertion order: re-inserting on every hit makes the first entry the
  // least recently used.
  const windows = new Map<string, { start: number; count: number }>();

  const makeRoom = (t: number) => {
    let chances = SECOND_CHANCES;
    while (windows.size >= maxKeys) {
      const [oldest, w] = windows.entries().next().value!;
      windows.delete(oldest);
      const blocked = t < w.start + windowMs && w.count >= limit;
      if (blocked && chances-- > 0) windows.set(oldest, w);
    }
  };

  return {
    check(key: string): RateLimitResult {
      const t = now();
      let w = windows.get(key);
      if (w) windows.delete(key);
      else makeRoom(t);
      if (!w || t >= w.start + windowMs) w = { start: t, count: 0 };
      windows.set(key, w);
      if (w.count >= limit) {
        // Clamped: a clock that stepped back must not promise a wait longer than one window.
        const waitMs = Math.min(w.start + windowMs - t, windowMs);
        return {
          allowed: false,
          retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
          remaining: 0,
        };
      }
      w.count++;
      return { allowed: true, retryAfterSeconds: 0, remaining: limit - w.count };
    },
    get size() {
      return windows.size;
    },
  };
}

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

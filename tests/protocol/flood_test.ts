/**
 * A flood of malformed raw requests against the app and both backend doubles: thousands of
 * requests, each made invalid in at least one way the service must catch before any backend work
 * (a bad `Host`, a dot segment, a bad id, a cross-site header, an unknown method, a wrong or
 * broken body), most with protocol junk on top (broken framing, header junk, odd request lines),
 * plus plain random bytes. Nothing may answer 5xx and no backend may see a single request; every
 * answer the app itself gives is in the one error shape. Deterministic (seeded) and bounded.
 *
 * Some requests end only by a deadline (a head or body that never completes, an answer after
 * which the connection is not closed). The service's deadlines run on a clock the test moves,
 * and only once nothing but a deadline can make progress: no client is sending, and for a
 * number of event-loop turns no byte has come back, no exchange has ended, no line was logged
 * and no deadline was set or cleared. Real work shows such a step within a few turns however
 * slowly each turn runs, so a busy or stalled machine makes the flood slower, never different.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { type ManualDeadlines, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { prng, propertySeed } from "../helpers/prng.ts";
import { rawConnection, type RawExchange } from "../helpers/raw_http.ts";
import { LINGER_MS } from "../../src/http/connection_deadlines.ts";
import type { Deadlines } from "../../src/util/deadlines.ts";
import { makePng, W } from "../../sims/world.ts";

const SEED = propertySeed(20261124);
const TOTAL = 3000;
const CONCURRENCY = 16;

type Rng = () => number;
const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)];

/** A request being built; serialized byte for byte (Latin-1) by {@linkcode serialize}. */
interface Req {
  method: string;
  /** `{id}` stands for a valid note id until a poison replaces it. */
  target: string;
  version: string;
  headers: [string, string][];
  body: string;
}

type BodyKind = "json" | "text" | "image";

/** Requests that would do backend work if nothing were wrong with them. */
interface Base {
  method: string;
  target: string;
  access: "private" | "public";
  body?: { kind: BodyKind; type: string; bytes: string };
}

const latin1 = (bytes: Uint8Array) => String.fromCharCode(...bytes);
const PNG = latin1(makePng(4, 4, () => [9, 9, 9]));
const json = (value: unknown) => ({
  kind: "json" as const,
  type: "application/json",
  bytes: JSON.stringify(value),
});

const BASES: Base[] = [
  { method: "GET", target: "/api/lore?q=%23lore", access: "private" },
  { method: "GET", target: "/api/lore/{id}", access: "private" },
  { method: "GET", target: "/api/lore/{id}/content", access: "private" },
  { method: "GET", target: "/api/lore/{id}/image", access: "private" },
  { method: "GET", target: "/api/ai/gaps", access: "private" },
  { method: "GET", target: "/api/rag?text=harbour", access: "private" },
  { method: "GET", target: "/api/search?mode=rag&q=harbour", access: "private" },
  { method: "GET", target: "/api/lore/{id}/graph", access: "private" },
  { method: "GET", target: "/", access: "public" },
  { method: "GET", target: "/public/lore/{id}", access: "public" },
  { method: "GET", target: "/api/public/search?q=harbour", access: "public" },
  { method: "GET", target: "/api/public/lore/{id}", access: "public" },
  { method: "GET", target: "/readyz", access: "public" },
  { method: "POST", target: "/api/lore", access: "private", body: json({ title: "Flood" }) },
  { method: "PATCH", target: "/api/lore/{id}", access: "private", body: json({ title: "F" }) },
  {
    method: "POST",
    target: "/api/brain-dump",
    access: "private",
    body: json({ rawText: "Mira meets Oskar at the docks." }),
  },
  { method: "POST", target: "/api/rag", access: "private", body: json({ text: "harbour" }) },
  { method: "PUT", target: "/api/share", access: "private", body: json({ noteId: null }) },
  { method: "POST", target: "/api/lore/autolink", access: "private", body: json({ text: "Mira" }) },
  {
    method: "PUT",
    target: "/api/lore/{id}/content",
    access: "private",
    body: { kind: "text", type: "text/plain", bytes: "<p>flood</p>" },
  },
  {
    method: "POST",
    target: "/api/lore/upload-image",
    access: "private",
    body: { kind: "image", type: "image/png", bytes: PNG },
  },
];

const BAD_HOSTS = [
  "a b/c@d",
  "x:99999",
  "[::1",
  "a%zz",
  "127.0.0.1:8080/api/lore/X/content?",
  "u@h",
  "h?q=1",
  "h#f",
  "ex.com\\foo",
  "1.2.3.999",
  "[zz::1]",
  "h:-1",
  "h:80:80",
  "é.example",
  "\x01host",
];
const BAD_IDS = [
  "%00",
  "a%2Fb",
  "x".repeat(300),
  "..%2F..%2Fapp-info",
  "%zz",
  "a.b",
  "<script>",
  "%C3%A9",
  "a%20b",
  "'",
  "%2e%2e",
  "_".repeat(129),
];
const DOT_SEGMENTS = ["/..", "/.", "/%2e%2e", "/%2E", "/.%2e", "/%2e.", "\\..", "\\"];
const ODD_METHODS = ["FOO", "get", "TRACE", "OPTIONS", "PROPFIND", "M-SEARCH", "PUTT", "X"];
const CROSS_SITE: [string, string][][] = [
  [["Sec-Fetch-Site", "cross-site"], ["Sec-Fetch-Mode", "no-cors"], ["Sec-Fetch-Dest", "image"]],
  [["Sec-Fetch-Site", "same-site"]],
  [["Sec-Fetch-Site", "cross-site"], ["Sec-Fetch-Mode", "navigate"]],
  [["Origin", "https://evil.example"]],
  [["Origin", "null"]],
];

/** An app-level fault: each alone must stop the request before any backend call. */
type Poison = (r: Req, base: Base, rng: Rng) => void;

const setHeader = (r: Req, name: string, value: string) => {
  r.headers = r.headers.filter(([n]) => n.toLowerCase() !== name.toLowerCase());
  r.headers.push([name, value]);
};
const setBody = (r: Req, bytes: string, declared = bytes.length) => {
  r.body = bytes;
  setHeader(r, "Content-Length", String(declared));
};

const POISONS: Record<string, Poison> = {
  badHost: (r, _b, rng) => setHeader(r, "Host", pick(rng, BAD_HOSTS)),
  dotSegment: (r, _b, rng) => {
    const [path, query] = r.target.split("?");
    const parts = path.split("/");
    const at = 1 + Math.floor(rng() * (parts.length - 1));
    r.target = `${parts.slice(0, at).join("/")}${pick(rng, DOT_SEGMENTS)}/` +
      parts.slice(at).join("/") + (query ? `?${query}` : "");
  },
  oddMethod: (r, _b, rng) => r.method = pick(rng, ODD_METHODS),
};
/** Poisons for private routes only (public ones accept any id and any site, by design). */
const PRIVATE_POISONS: Record<string, Poison> = {
  crossSite: (r, _b, rng) => {
    for (const [n, v] of pick(rng, CROSS_SITE)) setHeader(r, n, v);
  },
};
/** For private routes with an id in the path. */
const ID_POISONS: Record<string, Poison> = {
  badId: (r, _b, rng) => r.target = r.target.replace("{id}", pick(rng, BAD_IDS)),
};
const BODY_POISONS: Record<BodyKind, Record<string, Poison>> = {
  json: {
    wrongType: (r, _b, rng) =>
      setHeader(
        r,
        "Content-Type",
        pick(rng, [
          "text/plain",
          "text/html",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/jsonx",
          "",
        ]),
      ),
    notJson: (r, _b, rng) =>
      setBody(r, pick(rng, ["{", '{"title":', "nul", "{'a':1}", "\x00\x01", '{"a":1}}', "[1,]"])),
    notAnObject: (r, _b, rng) => setBody(r, pick(rng, ["[]", "null", '"x"', "12", "true"])),
    truncated: (r) =>
      setBody(r, r.body.slice(0, Math.floor(r.body.length / 2)), r.body.length + 50),
    tooLarge: (r) => setHeader(r, "Content-Length", "999999999"),
  },
  text: {
    wrongType: (r, _b, rng) =>
      setHeader(r, "Content-Type", pick(rng, ["application/xml", "application/json", ""])),
    badCharset: (r, _b, rng) =>
      setHeader(
        r,
        "Content-Type",
        `text/plain; charset=${pick(rng, ["utf-7", "UTF-16", "latin1", '"x"'])}`,
      ),
    truncated: (r) => setBody(r, r.body.slice(0, 3), r.body.length + 50),
    tooLarge: (r) => setHeader(r, "Content-Length", "999999999"),
  },
  image: {
    wrongType: (r, _b, rng) =>
      setHeader(r, "Content-Type", pick(rng, ["text/plain", "text/html", ""])),
    notImage: (r, _b, rng) =>
      setBody(
        r,
        pick(rng, [
          "<svg onload=alert(1)>",
          "<html>",
          "%PDF-1.7",
          "GIF89a",
          PNG.slice(0, 8),
          PNG.slice(0, 30),
          "",
        ]),
      ),
    truncated: (r) => setBody(r, PNG.slice(0, 20), PNG.length + 500),
    tooLarge: (r) => setHeader(r, "Content-Length", "999999999"),
  },
};

/** Protocol junk layered on top: Deno's HTTP parser may reject the request before the app sees it. */
const JUNK: ((r: Req, rng: Rng) => void)[] = [
  (r, rng) =>
    r.headers.push(
      pick(
        rng,
        [["X-Junk", "\x01\x7f"], ["Bad Header", "x"], ["X-Nul", "a\x00b"], ["X-Latin", "caf\xe9"], [
          "",
          "empty name",
        ], ["X-Tab", "\ta\t"]] as [string, string][],
      ),
    ),
  (r) => r.headers.push(["X-Big", "a".repeat(100_000)]),
  (r) => {
    for (let i = 0; i < 300; i++) r.headers.push([`X-H${i}`, "v"]);
  },
  (r, rng) =>
    setHeader(
      r,
      "Content-Length",
      pick(rng, ["abc", "-5", "1, 2", "+3", "99999999999999999999", " 4 "]),
    ),
  (r) => r.headers.push(["Content-Length", "0"], ["Content-Length", "7"]),
  (r, rng) =>
    r.headers.push([
      "Transfer-Encoding",
      pick(rng, ["chunked", "gzip", "chunked, gzip", "xchunked", "identity"]),
    ]),
  (r) => {
    setHeader(r, "Transfer-Encoding", "chunked");
    r.body = "zz\r\nabc\r\n0\r\n\r\n";
  },
  (r, rng) =>
    r.version = pick(rng, ["HTTP/1.2", "HTTP/2.0", "http/1.1", "HTTP/1.1 extra", "", "HTTP/9"]),
  (r) => r.target += "x".repeat(20_000),
  (r, rng) =>
    r.target = pick(rng, ["http://x:99999", "ftp://h", "http://u@h", "*", "h:80"]) + r.target,
  (r) => r.headers.push(["Host", "second.example"]),
  (r, rng) =>
    r.headers.push(["X-Request-Id", pick(rng, ["\x7f", "a".repeat(500), "id with spaces"])]),
  (r) => r.headers.push(["Cookie", "parser_token=v1.forged; parser_url=http://evil.example"]),
  (r) => r.headers.push(["Expect", "100-continue"]),
  (r) => r.headers.push(["X-Folded", "a"], [" b", ""]),
];

function serialize(r: Req): Uint8Array {
  const head = `${r.method} ${r.target}${r.version ? ` ${r.version}` : ""}\r\n` +
    r.headers.map(([n, v]) => `${n}: ${v}\r\n`).join("") + "\r\n";
  const text = head + r.body;
  return Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff);
}

/** One request: random bytes, or a base request with at least one app-level poison. */
function generate(rng: Rng): { request: Uint8Array; label: string } {
  if (rng() < 0.05) {
    const bytes = new Uint8Array(1 + Math.floor(rng() * 2000));
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rng() * 256);
    return { request: bytes, label: "random bytes" };
  }
  const base = pick(rng, BASES);
  const r: Req = {
    method: base.method,
    target: base.target,
    version: "HTTP/1.1",
    headers: [["Host", "127.0.0.1"]],
    body: "",
  };
  if (base.body) {
    setHeader(r, "Content-Type", base.body.type);
    setBody(r, base.body.bytes);
  }
  const poisons = {
    ...POISONS,
    ...(base.access === "private" ? PRIVATE_POISONS : {}),
    ...(base.access === "private" && base.target.includes("{id}") ? ID_POISONS : {}),
    ...(base.body ? BODY_POISONS[base.body.kind] : {}),
  };
  const names = Object.keys(poisons);
  const chosen = new Set([pick(rng, names)]);
  if (rng() < 0.3) chosen.add(pick(rng, names));
  for (const name of chosen) poisons[name](r, base, rng);
  const junk = rng() < 0.6 ? Math.ceil(rng() * 2) : 0;
  for (let i = 0; i < junk; i++) pick(rng, JUNK)(r, rng);
  r.target = r.target.replace("{id}", W.charMira);
  r.headers.push(["Connection", "close"]);
  return {
    request: serialize(r),
    label: `${base.method} ${base.target} [${[...chosen].join(", ")}]${
      junk ? ` +${junk} junk` : ""
    }`,
  };
}

interface Outcome {
  label: string;
  request: Uint8Array;
  exchange: RawExchange;
}

/** The client deadlines, each its own duration; every one is due within `LINGER_MS`. */
const HEAD_MS = 3_000;
const BODY_IDLE_MS = 2_000;
const IDLE_MS = 4_000;

/** Event-loop turns without a visible step before the clock moves (a step takes a few). */
const QUIET_TURNS = 25;

/** The manual clock, counting every deadline set or cleared: steps of the service we can see. */
function counting(time: ManualDeadlines): { deadlines: Deadlines; steps(): number } {
  let steps = 0;
  return {
    deadlines: {
      start(ms, onExpire) {
        steps++;
        const cancel = time.start(ms, onExpire);
        return () => {
          steps++;
          cancel();
        };
      },
      pending: () => time.pending(),
      now: () => time.now(),
    },
    steps: () => steps,
  };
}

/**
 * Sends every case, `CONCURRENCY` connections at a time, and moves `time` past every pending
 * deadline whenever the flood is stuck; returns the outcomes and how often the clock moved.
 */
async function flood(
  h: Harness,
  time: ManualDeadlines,
  steps: () => number,
): Promise<{ outcomes: Outcome[]; moves: number }> {
  const rng = prng(SEED);
  const cases = Array.from({ length: TOTAL }, () => generate(rng));
  const outcomes: Outcome[] = [];
  const open = new Set<{ text(): string }>();
  let sending = 0;
  let received = 0;
  let next = 0;
  let finished = false;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++];
      sending++;
      const conn = await rawConnection(h.url, c.request, { hangGuardMs: 20_000 })
        .finally(() => sending--);
      open.add(conn);
      const exchange = await conn.done();
      open.delete(conn);
      received += exchange.text.length;
      outcomes.push({ ...c, exchange });
    }
  };
  const seen = () =>
    [
      received + [...open].reduce((n, c) => n + c.text().length, 0),
      outcomes.length,
      h.logs.length,
      steps(),
    ].join();
  let moves = 0;
  const mover = (async () => {
    let last = "";
    let quiet = 0;
    while (!finished) {
      await new Promise((r) => setTimeout(r, 1)); // a turn of the event loop, I/O included
      const now = seen();
      if (sending > 0 || now !== last || time.pending() === 0) {
        last = now;
        quiet = 0;
      } else if (++quiet >= QUIET_TURNS) {
        time.advance(LINGER_MS); // every pending deadline is due by then
        moves++;
        quiet = 0;
      }
    }
  })();
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    finished = true;
    await mover;
  }
  return { outcomes, moves };
}

const show = (o: Outcome) =>
  `${o.label} → ${o.exchange.status}: ${JSON.stringify(latin1(o.request.subarray(0, 300)))}`;

Deno.test(`flood: ${TOTAL} malformed raw requests, 0 × 5xx, no backend call (seed ${SEED})`, async () => {
  const time = manualDeadlines();
  const { deadlines, steps } = counting(time);
  await withHarness(async (h) => {
    h.core.clearRequests();
    h.parser!.clearRequests();
    const { outcomes, moves } = await flood(h, time, steps);
    assert.equal(outcomes.length, TOTAL);

    const failed = outcomes.filter((o) => (o.exchange.status ?? 0) >= 500);
    assert.deepEqual(failed.slice(0, 10).map(show), [], `${failed.length} answers were 5xx`);

    const backend = [...h.core.requests, ...h.parser!.requests].map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(backend, [], "invalid input reached a backend");

    // every answer the app gave (it carries a request id) is in the one error shape, or outside
    // the API the site's error page with the same reference
    const app = outcomes.filter((o) => o.exchange.headers.has("x-request-id"));
    for (const o of app) {
      const id = o.exchange.headers.get("x-request-id")!;
      if (o.exchange.headers.get("content-type")?.startsWith("text/html")) {
        assert.ok(o.exchange.body.includes(`Reference: <code>${id}</code>`), show(o));
        continue;
      }
      const body = JSON.parse(o.exchange.body);
      assert.equal(body.requestId, id, show(o));
      assert.equal(typeof body.error, "string", show(o));
      assert.equal(typeof body.message, "string", show(o));
    }
    assert.ok(app.length > TOTAL / 3, `only ${app.length} requests got past the HTTP parser`);
    const lines = h.logs.map((l) => JSON.parse(l));
    assert.deepEqual(lines.filter((l) => l.level === "error" || l.msg === "unhandled error"), []);
    // no connection was left for the hang guard to close: the deadlines closed those that
    // needed one
    assert.deepEqual(outcomes.filter((o) => !o.exchange.closedByServer).map(show), []);
    assert.ok(moves > 0, "some connections ended only by a deadline");
  }, {
    deadlines,
    parser: true,
    parserSession: true,
    env: {
      CLIENT_DEADLINES: "on", // every connection must end: the relay's deadlines close them
      CLIENT_HEADER_TIMEOUT_MS: String(HEAD_MS),
      CLIENT_BODY_TIMEOUT_MS: String(BODY_IDLE_MS),
      CLIENT_IDLE_TIMEOUT_MS: String(IDLE_MS),
    },
  });
});

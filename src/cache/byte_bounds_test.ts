import assert from "node:assert/strict";
import {
  AI_KEPT_MAX_BYTES,
  AUTOLINK_MAX_BYTES,
  createAppState,
  PREVIEW_MAX_BYTES,
} from "../state/app_state.ts";
import { loadConfig } from "../config/service_config.ts";
import { createCredentialResolver } from "../credentials/resolver.ts";
import { jsonLogger } from "../http/log.ts";
import { compileAutolink } from "../lore/autolink.ts";
import { type KeptAnswer, keptAnswerBytes } from "../pipeline/ai_route.ts";
import { createAiCalls } from "../upstream/ai_calls.ts";

const silent = jsonLogger("silent");
const state = () => createAppState(loadConfig({}), undefined, silent, fetch);

Deno.test("previews: evicted by bytes, the least recently used first", () => {
  const { preview } = state();
  const quarter = "p".repeat(PREVIEW_MAX_BYTES / 8); // a quarter of the bound at 2 bytes a char
  for (const key of ["a", "b", "c"]) preview.set(key, quarter);
  preview.get("a");
  preview.set("d", quarter);
  preview.set("e", quarter);
  assert.equal(preview.get("b"), undefined);
  assert.equal(preview.get("a"), quarter);
  assert.ok(preview.bytes <= PREVIEW_MAX_BYTES);
  preview.set("huge", "p".repeat(PREVIEW_MAX_BYTES));
  assert.equal(preview.get("huge"), undefined);
  assert.equal(preview.get("a"), quarter); // an entry over the whole bound evicts nothing
});

Deno.test("autolink: title indexes are weighed and evicted by bytes", () => {
  const { autolink } = state();
  const titles = Array.from({ length: 2_000 }, (_, i) => ({
    noteId: `note${i}`,
    title: `Harbor district ${i} of the old quarter`,
  }));
  const matcher = compileAutolink(titles);
  assert.ok(matcher.bytes > 2_000 * 30, `a matcher of 2,000 titles weighs ${matcher.bytes}`);
  const fits = Math.floor(AUTOLINK_MAX_BYTES / matcher.bytes);
  for (let i = 0; i <= fits; i++) autolink.set(`caller-${i}`, matcher);
  assert.equal(autolink.size, fits);
  assert.equal(autolink.get("caller-0"), undefined);
  assert.ok(autolink.bytes <= AUTOLINK_MAX_BYTES);
});

Deno.test("AI kept answers: the oldest go once they pass the byte bound; an oversized one is not kept", async () => {
  const calls = createAiCalls<KeptAnswer>({
    totalMs: 60_000,
    ttlMs: 60_000,
    maxEntries: 100,
    maxKeptBytes: AI_KEPT_MAX_BYTES,
    sizeOf: keptAnswerBytes,
  });
  const answer = (bytes: number): KeptAnswer => ({
    status: 200,
    headers: [["content-type", "application/json"]],
    body: new Uint8Array(bytes),
  });
  const cut = { idleMs: 0, signal: new AbortController().signal, cutOff: () => new Error("cut") };
  const third = answer(AI_KEPT_MAX_BYTES / 3);
  // nobody waits for the answers when they come: each one is kept for a retry
  const answerUnwaited = async (key: string, value: KeptAnswer) => {
    let finish!: (a: KeptAnswer) => void;
    const work = new Promise<KeptAnswer>((r) => finish = r);
    await assert.rejects(calls.run(key, () => work, cut), { message: "cut" });
    finish(value);
    await work;
    await new Promise((r) => setTimeout(r, 0));
  };
  for (const key of ["a", "b", "c", "d"]) await answerUnwaited(key, third);
  assert.equal(calls.size, 2); // three thirds plus headers pass the bound: a and b went
  await answerUnwaited("huge", answer(AI_KEPT_MAX_BYTES));
  assert.equal(calls.size, 2); // not kept, and c and d stay
  const notAgain = () => Promise.reject(new Error("ran again"));
  const wait = { ...cut, idleMs: 1_000 };
  assert.equal(await calls.run("d", notAgain, wait), third);
  await assert.rejects(calls.run("a", notAgain, wait), { message: "ran again" });
  calls.close();
});

Deno.test("credentials: cached Core credentials are evicted by bytes", async () => {
  const config = loadConfig({
    ZERO_LOGIN: "true",
    PARSER_URL: "http://parser:8000",
    PARSER_INTERNAL_SECRET: "internal-secret-of-the-test",
    SESSION_SECRET: "s".repeat(32),
    CORE_ALLOWED_URLS: "http://core:8080",
  });
  let minted = 0;
  const handedOut: string[] = [];
  // each Core token weighs about 400 KB: two fit in the 1 MiB bound, three do not
  const fakeParser = (input: RequestInfo | URL) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.pathname === "/internal/auto-provision") {
      return Promise.resolve(Response.json({ token: `session-token-${++minted}`.padEnd(20, "x") }));
    }
    const token = `${handedOut.length}`.padEnd(200_000, "t");
    handedOut.push(token);
    return Promise.resolve(Response.json({ baseUrl: "http://core:8080", token }));
  };
  const resolver = createCredentialResolver({
    config,
    fetch: fakeParser as typeof fetch,
    log: silent,
  });
  const cookieOf = async () => {
    const creds = resolver.forRequest(new Request("http://127.0.0.1:8080/api/lore"), {});
    await creds.core();
    return creds.setCookies.map((c) => c.split(";")[0]).join("; ");
  };
  const sessions = [await cookieOf(), await cookieOf(), await cookieOf()];
  assert.equal(handedOut.length, 3);
  const coreFor = (cookie: string) =>
    resolver.forRequest(
      new Request("http://127.0.0.1:8080/api/lore", { headers: { cookie } }),
      {},
    ).core();
  assert.equal((await coreFor(sessions[2])).token, handedOut[2]); // still cached
  assert.equal(handedOut.length, 3);
  await coreFor(sessions[0]); // evicted by the third: asked again
  assert.equal(handedOut.length, 4);
});

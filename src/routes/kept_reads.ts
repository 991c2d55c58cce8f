/**
 * Parser reads kept per caller. The Parser rate-limits some reads in one bucket with its AI work
 * (the brain-dump history counts against the 10 brain dumps a minute), keyed by client address,
 * so every user of this service shares it: the front end reading the history on each visit of
 * its page would spend the budget its users need for brain dumps. A read of such a group is kept
 * `PARSER_READ_CACHE_MS` under the caller's Parser identity and its path and query; any write of
 * the group by the same caller through this instance drops the caller's kept reads when it is
 * done, so what the caller just did shows at once. Writes elsewhere (another instance, a batch
 * job finishing on the Parser) show within the keep time.
 *
 * @module
 */
import { credentialIdentity } from "../credentials/identity.ts";
import type { Ctx } from "../api/router.ts";

/** How a route takes part: it serves kept reads of `group`, or its writes change them. */
export interface KeptReads {
  group: string;
  role: "read" | "write";
}

/**
 * The key of the caller's kept reads of `group`; with `url`, of that one read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const url = new URL("http://x/api/brain-dump/history?limit=5");
 * assert.equal(keptReadKey("brain-dump", "ab12", url), "brain-dump\nab12\n/api/brain-dump/history?limit=5");
 * assert.ok(keptReadKey("brain-dump", "ab12", url).startsWith(keptReadKey("brain-dump", "ab12")));
 * ```
 */
export function keptReadKey(group: string, identity: string, url?: URL): string {
  return `${group}\n${identity}\n${url ? url.pathname + url.search : ""}`;
}

async function callerIdentity(ctx: Ctx): Promise<string> {
  return await credentialIdentity(await ctx.credentials.parser());
}

/**
 * Runs `read`, or answers what the same caller's same read gave within the keep time (one
 * Parser call for concurrent ones). A failed read is not kept.
 */
export async function keptRead<T>(ctx: Ctx, group: string, read: () => Promise<T>): Promise<T> {
  const key = keptReadKey(group, await callerIdentity(ctx), ctx.url);
  return await ctx.state.parserReads.getOrLoad(key, read) as T;
}

/** Drops every kept read of `group` by this caller. */
export async function forgetKeptReads(ctx: Ctx, group: string): Promise<void> {
  const prefix = keptReadKey(group, await callerIdentity(ctx));
  ctx.state.parserReads.deleteWhere((key) => key.startsWith(prefix));
}

/**
 * Runs `work` as this route's part in `kept` says: a read through the caller's kept reads, a
 * write followed (also when it failed: it may have written) by dropping them.
 */
export async function withKeptReads<T>(
  ctx: Ctx,
  kept: KeptReads | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (!kept) return await work();
  if (kept.role === "read") return await keptRead(ctx, kept.group, work);
  try {
    return await work();
  } finally {
    await forgetKeptReads(ctx, kept.group).catch(() => {});
  }
}

/**
 * A request's record: what its phases learn on the way and the last one needs — the matched
 * route, its credentials, whether it wrote to Core, its backend calls' time and first failure.
 * Opened before anything can fail, so an error answer and the log line always have it.
 *
 * @module
 */
import type { PublicShare } from "../share/public_api.ts";
import type { Route } from "../api/router.ts";
import type { RequestCredentials } from "../credentials/request_credentials.ts";
import { requestIdFor } from "../http/request_id.ts";
import type { UpstreamFailure } from "../upstream/fetch.ts";
import type { UpstreamMeter } from "./context.ts";
import type { RequestWrites } from "../state/write_journal.ts";

/** One request on its way through the pipeline. */
export interface RequestRecord {
  readonly requestId: string;
  /** `performance.now()` when the request came in. */
  readonly started: number;
  /** The route that answers (pipeline/accept.ts); undefined when none matched. */
  route?: Route;
  /** Errors answer with the site's HTML page, not the JSON error (paths outside the API). */
  pageErrors: boolean;
  /** Resolved for `session` and `private` routes only (pipeline/run.ts). */
  creds?: RequestCredentials;
  /**
   * A Core call that may have changed Core was sent: the public share, which pipeline/finish.ts
   * refreshes before answering. Null otherwise.
   */
  wroteCore: PublicShare | null;
  /** The notes this request creates, journaled until its answer is ready (pipeline/run.ts). */
  writes?: RequestWrites;
  /** Frees the request's body slot; set while it holds one (pipeline/accept.ts). */
  bodyDone?: () => void;
  /** Where the request's backend calls report to `upstream`. */
  readonly meter: UpstreamMeter;
  readonly upstream: {
    ms: number;
    calls: number;
    /** The first failure's service and class: the one the answer is about. */
    failed: string;
    reason?: UpstreamFailure;
  };
}

/**
 * Opens the record of `req`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const record = openRecord(new Request("http://127.0.0.1:8080/api/lore"));
 * record.meter.onFailure("CORE", "timeout");
 * record.meter.onFailure("PARSER", "refused");
 * assert.deepEqual(record.upstream, { ms: 0, calls: 0, failed: "core", reason: "timeout" });
 * ```
 */
export function openRecord(req: Request): RequestRecord {
  const upstream: RequestRecord["upstream"] = { ms: 0, calls: 0, failed: "", reason: undefined };
  return {
    started: performance.now(),
    requestId: requestIdFor(req),
    route: undefined,
    pageErrors: false,
    creds: undefined,
    wroteCore: null,
    bodyDone: undefined,
    upstream,
    meter: {
      onTiming(ms) {
        upstream.ms += ms;
        upstream.calls++;
      },
      onFailure(service, reason) {
        // the first failure is the one the answer is about; later ones follow from it
        if (upstream.reason) return;
        upstream.reason = reason;
        upstream.failed = service.toLowerCase();
      },
    },
  };
}

/** The record's route as the log names it. */
export function routeName(record: RequestRecord): string {
  return record.route?.path ?? "(unmatched)";
}

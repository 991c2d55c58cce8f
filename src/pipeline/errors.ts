/**
 * An error on the way, as an answer: a client that left gets 499 (nobody reads it), anything
 * else the one JSON error shape — or, off the API, the site's HTML error page. An error that is
 * no `ApiError` is a bug and logged; the request's credentials hear of every error (a Core 401
 * drops a stale session).
 *
 * @module
 */
import { ApiError, errorResponse } from "../http/errors.ts";
import type { Logger } from "../http/log.ts";
import { errorPageResponse } from "../site/error_page.ts";
import { ClientAbortError } from "../upstream/fetch.ts";
import { type RequestRecord, routeName } from "./record.ts";

/**
 * The error phase of an app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiError } from "../http/errors.ts";
 * import { jsonLogger } from "../http/log.ts";
 * import { openRecord } from "./record.ts";
 *
 * const errorAnswer = errorAnswerer(jsonLogger("silent"));
 * const record = openRecord(new Request("http://127.0.0.1:8080/api/lore"));
 * const res = await errorAnswer(new ApiError(404, "NOT_FOUND", "No such note"), record);
 * assert.equal(res.status, 404);
 * ```
 */
export function errorAnswerer(
  log: Logger,
  worldName: () => string | undefined = () => undefined,
): (e: unknown, record: RequestRecord) => Promise<Response> {
  return async (e, record) => {
    if (e instanceof ClientAbortError) return new Response(null, { status: 499 });
    if (!(e instanceof ApiError)) {
      log.log("error", "unhandled error", {
        requestId: record.requestId,
        route: routeName(record),
        error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
      });
    }
    await record.creds?.onError(e).catch(() => {});
    return record.pageErrors
      ? pageError(e, record.requestId, worldName())
      : errorResponse(e, record.requestId);
  };
}

/** The site's HTML error page for an unmatched path, keeping a 405's `Allow`. */
function pageError(e: unknown, requestId: string, world: string | undefined): Response {
  const res = errorPageResponse(e, requestId, world);
  const allow = e instanceof ApiError && e.headers && new Headers(e.headers).get("allow");
  if (allow) res.headers.set("allow", allow);
  return res;
}

/**
 * The last phase, for every answer (errors and preflights too): what follows from the request
 * as a whole — the public share refreshed after a write to Core, the response check (tests),
 * the common headers, the session's cookies, CORS, and the request log line.
 *
 * @module
 */
import type { Config } from "../config/service_config.ts";
import { requestPath } from "../http/access_log.ts";
import { clientAddress, type ClientInfo } from "../http/client_address.ts";
import type { CorsPolicy } from "../http/cors.ts";
import type { Logger } from "../http/log.ts";
import { hasPolicyHeaders } from "../http/response.ts";
import type { AppState } from "../state/app_state.ts";
import type { RequestRecord } from "./record.ts";
import { routeName } from "./record.ts";
import type { ResponseCheck } from "./response_check.ts";

/** What finishing takes from the app. */
export interface FinishDeps {
  config: Config;
  log: Logger;
  state: AppState;
  cors: CorsPolicy | null;
  /** Tests only (pipeline/response_check.ts); unset, production pays nothing for it. */
  checkResponse?: ResponseCheck;
}

/**
 * The finish phase of an app: the answer as sent. Waits only for the public share's refresh
 * after a write to Core, and for a response check.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "../http/log.ts";
 * import { createAppState } from "../state/app_state.ts";
 * import { sharedDeadlines } from "../util/deadlines.ts";
 * import { openRecord } from "./record.ts";
 *
 * const config = loadConfig({});
 * const log = jsonLogger("silent");
 * const state = createAppState(config, undefined, log, fetch, sharedDeadlines);
 * const finish = finisher({ config, log, state, cors: null });
 * const req = new Request("http://127.0.0.1:8080/healthz");
 * const record = openRecord(req);
 * const res = await finish(req, {}, new Response("ok"), record);
 * assert.equal(res.headers.get("x-request-id"), record.requestId);
 * assert.equal(res.headers.get("x-content-type-options"), "nosniff");
 * ```
 */
export function finisher(deps: FinishDeps): (
  req: Request,
  info: ClientInfo,
  res: Response,
  record: RequestRecord,
) => Response | Promise<Response> {
  const { config, log, cors, checkResponse } = deps;
  const combinedLog = config.LOG_FORMAT === "combined";

  /** The answer as sent, and its log line. */
  const sent = (req: Request, info: ClientInfo, answer: Response, record: RequestRecord) => {
    const res = withCommonHeaders(answer, record.requestId);
    for (const cookie of record.creds?.setCookies ?? []) res.headers.append("set-cookie", cookie);
    // a preflight carries its own headers; any other OPTIONS gets none
    if (cors && req.method !== "OPTIONS") cors.decorate(req, res.headers);
    const line: Record<string, unknown> = {
      requestId: record.requestId,
      method: req.method,
      route: routeName(record),
      status: res.status,
      ms: round(performance.now() - record.started),
      upstreamMs: round(record.upstream.ms),
      upstreamCalls: record.upstream.calls,
      client: clientAddress(req, info, config.TRUST_PROXY),
    };
    if (record.upstream.reason) {
      line.reason = record.upstream.reason;
      line.upstream = record.upstream.failed;
    }
    if (combinedLog) {
      line.path = requestPath(req);
      line.bytes = res.headers.get("content-length") ?? undefined;
      line.userAgent = req.headers.get("user-agent") ?? undefined;
    }
    log.log(res.status >= 500 ? "warn" : "info", "request", line);
    return res;
  };

  const checked = (req: Request, info: ClientInfo, res: Response, record: RequestRecord) => {
    const { route } = record;
    if (!checkResponse || !route) return sent(req, info, res, record);
    return checkResponse(route, req, res, record.requestId).then((checked) =>
      sent(req, info, checked, record)
    );
  };

  const refreshed = (req: Request, info: ClientInfo, res: Response, record: RequestRecord) => {
    // Anything written to Core may change what visitors see (a root moved, a note hidden): once
    // the writer has its answer they must see it, also after a write that failed or was left
    // half done. Visitors meanwhile keep the last good version.
    if (!record.wroteCore) return checked(req, info, res, record);
    return record.wroteCore.refresh().then(() => checked(req, info, res, record));
  };

  return (req, info, res, record) => {
    // the answer is ready: what the request created is no longer a write cut off half way
    if (!record.writes) return refreshed(req, info, res, record);
    return record.writes.close().then(() => refreshed(req, info, res, record));
  };
}

/** `X-Request-Id`, and `nosniff` and `no-referrer` unless the answer set its own. */
function withCommonHeaders(res: Response, requestId: string): Response {
  let out = res;
  try {
    out.headers.set("x-request-id", requestId);
  } catch {
    // upstream responses have immutable headers: re-wrap without copying the body
    out = new Response(res.body, res);
    out.headers.set("x-request-id", requestId);
  }
  // a kept answer's clone has both (share/rendered_answer.ts): no need to look
  if (hasPolicyHeaders(out)) return out;
  if (!out.headers.has("x-content-type-options")) {
    out.headers.set("x-content-type-options", "nosniff");
  }
  if (!out.headers.has("referrer-policy")) out.headers.set("referrer-policy", "no-referrer");
  return out;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

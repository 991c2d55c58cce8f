/**
 * The first phase: whether and where a request goes. Its URL, the host rule, the route it
 * matches (or a CORS preflight, 404, 405), the cross-site check, and a body slot for a route
 * that reads a body — all before any credential is read or any backend is called.
 *
 * @module
 */
import { type CompiledRoute, compileRoutes, matchRoute, type Route } from "../api/router.ts";
import { jsonAnswerPaths } from "../api/route_responses.ts";
import type { Config } from "../config/service_config.ts";
import type { BodySlots } from "../http/body_slots.ts";
import { type ClientInfo, clientKey } from "../http/client_address.ts";
import type { CorsPolicy } from "../http/cors.ts";
import { checkCrossSite, type OriginPolicy } from "../http/csrf.ts";
import { ApiError } from "../http/errors.ts";
import { hostRule } from "../http/host_check.ts";
import type { Logger } from "../http/log.ts";
import { requestUrl } from "../http/request_url.ts";
import type { RequestRecord } from "./record.ts";

/** What the server knows of a request besides the request itself. */
export interface RequestInfo extends ClientInfo {
  /**
   * The request came off a connection (`Deno.serve`), which makes up a host for a request that
   * sent none: such a request must carry its own `Host` (see http/request_url.ts). A request
   * made in the process (tests) leaves its host to its URL.
   */
  served?: boolean;
}

/** A request let in: its route and raw path params, or the answer to a CORS preflight. */
export type Accepted =
  | { kind: "route"; url: URL; route: Route; params: Record<string, string | undefined> }
  | { kind: "preflight"; res: Response };

/** What accepting takes from the app. */
export interface AcceptDeps {
  config: Config;
  log: Logger;
  routes: readonly Route[];
  cors: CorsPolicy | null;
  /** The request bodies in progress (the app's, so that shutdown can wait for them). */
  bodies: BodySlots;
}

/**
 * The accept phase of an app. It throws the refusal (400, 403, 404, 405, 421, 429) as an
 * `ApiError` after noting in `record` whether it is answered with the site's page.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "../http/log.ts";
 * import { bodySlots } from "../http/body_slots.ts";
 * import { openRecord } from "./record.ts";
 *
 * const accept = acceptor({
 *   config: loadConfig({}),
 *   log: jsonLogger("silent"),
 *   routes: [],
 *   cors: null,
 *   bodies: bodySlots({ total: 10, perClient: 2 }),
 * });
 * const req = new Request("http://127.0.0.1:8080/api/no-such-route");
 * assert.throws(() => accept(req, {}, openRecord(req)), { status: 404, code: "NOT_FOUND" });
 * ```
 */
export function acceptor(
  deps: AcceptDeps,
): (req: Request, info: RequestInfo, record: RequestRecord) => Accepted {
  const { config, log, cors } = deps;
  const table: CompiledRoute[] = compileRoutes(deps.routes);
  const hosts = hostRule(config);
  const origins: OriginPolicy = {
    trustProxy: config.TRUST_PROXY,
    publicOrigin: config.PUBLIC_ORIGIN,
    allowed: cors?.allows,
  };
  const { bodies } = deps;
  // outside /api/, unknown paths and methods answer the site's HTML page, except where health
  // checkers (JSON readers) call; the documented answers follow the same rule
  const answersJson = jsonAnswerPaths(deps.routes);

  return (req, info, record) => {
    // a malformed or missing Host or a malformed target is a 400 like any bad input
    const url = requestUrl(req, info.served);
    // a host this service does not answer to is refused before any work: no route, no
    // credentials, no zero-login session, no backend call (http/host_check.ts)
    const host = hosts.check(req, url);
    if (!host.ok) {
      // a name refused (421) gets the site's page off the API; an unreadable X-Forwarded-Host
      // (400), like an unreadable Host, the JSON error on every path
      record.pageErrors = host.error.status === 421 && !answersJson(url.pathname);
      log.log("info", "host refused", { requestId: record.requestId, host: host.host });
      throw host.error;
    }
    const match = matchRoute(table, req.method, url.pathname);
    if (match.kind !== "found") {
      record.pageErrors = !answersJson(url.pathname);
      const allow = match.kind === "method" ? match.allow : [];
      const preflight = cors?.preflight(req, allow);
      if (!preflight) throw unmatched(allow);
      return { kind: "preflight", res: preflight };
    }
    const { route, params } = match;
    record.route = route;
    checkCrossSite(req, url, route.access === "public", origins);
    // a body in progress holds a slot (http/body_slots.ts): JSON and text until read, a
    // streamed one until its handler is done
    if (route.body) record.bodyDone = bodies.enter(clientKey(req, info, config.TRUST_PROXY));
    return { kind: "route", url, route, params };
  };
}

/** 404 for a path no route has, 405 (with `Allow`) for a method the path does not have. */
function unmatched(allow: readonly string[]): ApiError {
  if (allow.length === 0) return new ApiError(404, "NOT_FOUND", "No such route");
  return new ApiError(405, "METHOD_NOT_ALLOWED", `Use ${allow.join(", ")}`, undefined, {
    allow: allow.join(", "),
  });
}

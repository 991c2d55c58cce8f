/**
 * The response check, for tests: every answer of a route that declares its responses must have
 * a status the route documents, and a body of the media type documented for that status: JSON
 * matching its schema, or the declared type (an HTML error page, an image, a stream; read only
 * for JSON), either where a status has both (route_responses.ts). A violation is reported and the answer replaced by a 500
 * `RESPONSE_SCHEMA` naming the route, the status and the failing fields, so the test that
 * provoked it fails with the reason in front of it. Production never turns it on (`AppDeps`).
 *
 * @module
 */
import type { z } from "zod";
import { declaresResponses, type ResponseDoc, routeResponses } from "../api/route_responses.ts";
import type { Route } from "../api/router.ts";
import { ApiError, errorResponse } from "../http/errors.ts";

/** Looks at one answer of a matched route; resolves to it, or to the answer that replaces it. */
export type ResponseCheck = (
  route: Route,
  req: Request,
  res: Response,
  requestId: string,
) => Promise<Response>;

/**
 * A response check that tells `onProblem` of each violation (one line: route, status, reason).
 *
 * @example
 * ```ts
 * const problems: string[] = [];
 * const check = responseCheck((p) => problems.push(p));
 * ```
 */
export function responseCheck(onProblem: (problem: string) => void): ResponseCheck {
  return async (route, req, res, requestId) => {
    let text: string | undefined;
    const read = async () => {
      try {
        return text = await res.clone().text();
      } catch {
        return undefined; // the body broke off: the client sees that failure itself
      }
    };
    // 499: the client left, nobody reads this answer
    const found = res.status === 499 || !declaresResponses(route)
      ? undefined
      : await violation(routeResponses(route, "routed"), req.method, res, read);
    if (!found) {
      if (text === undefined) return res;
      // A read body would go out as a stream (chunked): send the same bytes with their length,
      // exactly as without the check.
      await res.body?.cancel().catch(() => {});
      return new Response(text, res);
    }
    const where = `${route.method} ${route.path} answered ${res.status}`;
    onProblem(`${where}: ${found.reason}`);
    await res.body?.cancel().catch(() => {});
    return errorResponse(
      new ApiError(500, "RESPONSE_SCHEMA", `${where}: ${found.reason}`, {
        route: `${route.method} ${route.path}`,
        status: res.status,
        ...(found.issues ? { issues: found.issues } : {}),
      }),
      requestId,
    );
  };
}

/**
 * What is wrong with `res` as one of the answers `docs` documents (a route's, see
 * `routeResponses`), in one line; undefined when nothing is. A JSON body is read from a clone.
 * For answers no route gives, such as the host rule's, which the response check never sees.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { allRoutes } from "../routes/index.ts";
 * import { routeResponses } from "../api/route_responses.ts";
 * const health = routeResponses(allRoutes.find((r) => r.path === "/healthz")!);
 * const refused = Response.json(
 *   { error: "MISDIRECTED_REQUEST", message: "Not this host", requestId: "r1" },
 *   { status: 421 },
 * );
 * assert.equal(await answerProblem(health, "GET", refused), undefined);
 * assert.match(
 *   await answerProblem(health, "GET", new Response("<p>no</p>", { status: 421 })) ?? "",
 *   /^declared a JSON body, sent text\/plain/,
 * );
 * ```
 */
export async function answerProblem(
  docs: ReadonlyMap<number, ResponseDoc>,
  method: string,
  res: Response,
): Promise<string | undefined> {
  const read = () => res.clone().text().catch(() => undefined);
  return (await violation(docs, method, res, read))?.reason;
}

/** What is wrong with an answer. */
interface Violation {
  reason: string;
  issues?: { path: string; message: string }[];
}

async function violation(
  docs: ReadonlyMap<number, ResponseDoc>,
  method: string,
  res: Response,
  read: () => Promise<string | undefined>,
): Promise<Violation | undefined> {
  const doc = docs.get(res.status);
  if (!doc) {
    return { reason: `status ${res.status} is not declared (declared: ${[...docs.keys()]})` };
  }
  if (method === "HEAD") return undefined;
  const type = res.headers.get("content-type")?.split(";")[0].trim().toLowerCase() ?? "";
  if (doc.mediaType) {
    const declared = [doc.mediaType].flat();
    if (res.body === null || declared.some((m) => mediaTypeFits(type, m))) return undefined;
    // a status of both kinds (a page's HTML, or the JSON error before routing) goes on as JSON
    if (!doc.schema || !JSON_TYPE.test(type)) {
      const all = doc.schema ? [...declared, "application/json"] : declared;
      return { reason: `Content-Type is ${type || "missing"}, declared ${all.join(", ")}` };
    }
  }
  if (!doc.schema) return undefined;
  if (res.body === null || !JSON_TYPE.test(type)) {
    return { reason: `declared a JSON body, sent ${res.body ? type || "no type" : "none"}` };
  }
  const text = await read();
  if (text === undefined) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { reason: "the body is not JSON" };
  }
  const parsed = doc.schema.safeParse(body);
  return parsed.success ? undefined : {
    reason: `the body does not match its schema: ${describe(parsed.error.issues)}`,
    issues: parsed.error.issues.map((i) => ({ path: issuePath(i), message: i.message })),
  };
}

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/;

function mediaTypeFits(actual: string, declared: string): boolean {
  const [type, subtype] = declared.toLowerCase().split("/");
  return subtype === "*" ? actual.startsWith(`${type}/`) : actual === `${type}/${subtype}`;
}

function issuePath(issue: z.core.$ZodIssue): string {
  return issue.path.map(String).join(".") || "(body)";
}

function describe(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, 5).map((i) => `${issuePath(i)} ${i.message}`).join("; ");
  return issues.length > 5 ? `${shown}; and ${issues.length - 5} more` : shown;
}

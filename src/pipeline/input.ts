/**
 * The second phase: a route's input, read and validated against its declaration — path
 * params, query, and a JSON, form or text body within its limits (a streamed body is only checked for
 * its declared length; its handler reads it). Every failure is a 400, 413 or 415 before the
 * handler runs.
 *
 * @module
 */
import type { z } from "zod";
import { type Route, textBodyTypes } from "../api/router.ts";
import type { Config } from "../config/service_config.ts";
import {
  bodyReading,
  checkDeclaredLength,
  readLimitedText,
  requireMediaType,
  requireUtf8,
} from "../http/body.ts";
import { type FieldIssue, invalidRequest } from "../http/errors.ts";
import type { Logger } from "../http/log.ts";
import type { Deadlines } from "../util/deadlines.ts";
import type { RequestInput } from "./context.ts";

/** Raw path params as matching found them. */
export type RawParams = Record<string, string | undefined>;

/** What reading a body takes from the app. */
export interface InputDeps {
  config: Config;
  log: Logger;
  deadlines: Deadlines;
}

/**
 * The input reader of an app for routes with a body: params, query and the body. A route
 * without one needs no reader: {@linkcode readParamsAndQuery} answers at once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { defineRoute } from "../api/router.ts";
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "../http/log.ts";
 * import { sharedDeadlines } from "../util/deadlines.ts";
 *
 * const config = loadConfig({});
 * const readInput = inputReader({ config, log: jsonLogger("silent"), deadlines: sharedDeadlines });
 * const route = defineRoute({
 *   method: "POST",
 *   path: "/api/echo",
 *   summary: "Echo",
 *   backend: "None",
 *   access: "public",
 *   tag: "example",
 *   body: { kind: "json", schema: z.object({ title: z.string() }) },
 *   responses: { 200: "The title" },
 *   handler: (ctx) => new Response(ctx.body.title),
 * });
 * const url = new URL("http://127.0.0.1:8080/api/echo");
 * const req = new Request(url, {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ title: "Harbor Town" }),
 * });
 * const input = await readInput(route, {}, req, url, "req-1");
 * assert.deepEqual(input.body, { title: "Harbor Town" });
 * ```
 */
export function inputReader(deps: InputDeps): (
  route: Route,
  rawParams: RawParams,
  req: Request,
  url: URL,
  requestId: string,
) => Promise<RequestInput> {
  const { config, log, deadlines } = deps;
  return async (route, rawParams, req, url, requestId) => {
    const { params, query } = readParamsAndQuery(route, rawParams, url);
    const reading = () => bodyReading({ config, log, requestId, url, deadlines });
    let body: unknown = undefined;
    if (route.body?.kind === "json") {
      requireMediaType(req, ["application/json"]);
      const text = await readLimitedText(
        req,
        route.body.maxBytes ?? config.MAX_JSON_BYTES,
        reading(),
      );
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        throw invalidRequest("The request body is not valid JSON");
      }
      body = validate(route.body.schema, raw, "body");
    } else if (route.body?.kind === "form") {
      requireMediaType(req, ["application/x-www-form-urlencoded"]);
      requireUtf8(req);
      const text = await readLimitedText(req, config.MAX_JSON_BYTES, reading());
      body = validate(route.body.schema, formFields(text), "body");
    } else if (route.body?.kind === "text") {
      requireMediaType(req, textBodyTypes(route.body));
      requireUtf8(req);
      body = await readLimitedText(req, config.MAX_CONTENT_BYTES, reading());
    } else if (route.body?.kind === "stream") {
      checkDeclaredLength(req, config.MAX_UPLOAD_BYTES);
    }
    return { params, query, body };
  };
}

/**
 * The fields of an HTML form's body, each named once (a field sent twice is refused, not
 * guessed at), percent-decoded as UTF-8.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(formFields("user=player&password=l%C3%A4mp+light"), {
 *   user: "player",
 *   password: "lämp light",
 * });
 * assert.throws(() => formFields("a=1&a=2"), { status: 400, code: "INVALID_REQUEST" });
 * ```
 */
export function formFields(text: string): Record<string, string> {
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (fields.has(name)) {
      throw invalidRequest(`The form field ${JSON.stringify(name)} is sent more than once`, [
        { path: `body.${name}`, message: "sent more than once" },
      ]);
    }
    fields.set(name, value);
  }
  // own data properties only (a field named `__proto__` is just a field)
  return Object.fromEntries(fields);
}

/** The request's validated path params and query; no body. */
export function readParamsAndQuery(route: Route, rawParams: RawParams, url: URL): RequestInput {
  const params = route.params ? validate(route.params, rawParams, "path") : rawParams;
  const query = route.query
    ? validate(route.query, Object.fromEntries(url.searchParams), "query")
    : {};
  return { params, query, body: undefined };
}

/**
 * Parses input with a zod schema; failures become 400 with one entry per failing field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * const query = z.object({ q: z.string().min(2) });
 * assert.deepEqual(validate(query, { q: "ash" }, "query"), { q: "ash" });
 * assert.throws(() => validate(query, { q: "a" }, "query"), {
 *   status: 400,
 *   code: "INVALID_REQUEST",
 *   message: /^Invalid query: query\.q /, // one entry per failing field, also in `details.fields`
 * });
 * ```
 */
export function validate<S extends z.ZodType>(
  schema: S,
  input: unknown,
  where: string,
): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const fields: FieldIssue[] = r.error.issues.map((i) => ({
    path: [where, ...i.path.map(String)].join("."),
    message: i.message,
  }));
  throw invalidRequest(
    `Invalid ${where}: ${fields.map((f) => `${f.path} ${f.message}`).join("; ")}`,
    fields,
  );
}

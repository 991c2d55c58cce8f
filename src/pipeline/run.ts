/**
 * The third phase: the route's handler, with the context its access allows. Credentials are
 * resolved here and only for routes that declare them: a public route never mints a zero-login
 * session, reads a cookie or sets one. AI routes run through pipeline/ai_route.ts; HEAD gets the
 * GET's answer without its body.
 *
 * @module
 */
import type { Route } from "../api/router.ts";
import { credentialIdentity } from "../credentials/identity.ts";
import type { CredentialResolver } from "../credentials/request_credentials.ts";
import type { ClientInfo } from "../http/client_address.ts";
import type { AiCalls, AiWork } from "../upstream/ai_calls.ts";
import { type AiRequest, answerAiRoute, type KeptAnswer } from "./ai_route.ts";
import { type ContextBuilders, type RequestInput, shareFor, withLazySignal } from "./context.ts";
import { type RequestRecord, routeName } from "./record.ts";
import type { WriteJournal } from "../state/write_journal.ts";

/** What running a route takes from the app. */
export interface RunDeps {
  credentials: CredentialResolver;
  contexts: ContextBuilders<Route>;
  aiCalls: AiCalls<KeptAnswer>;
  /** Where the notes a request creates are journaled while its write is under way. */
  journal: WriteJournal;
}

/** Answers one matched request. */
export type Run = (
  req: Request,
  url: URL,
  route: Route,
  input: RequestInput,
  info: ClientInfo,
  record: RequestRecord,
) => Promise<Response> | Response;

/** The run phase of an app: answers a matched request with its route's handler. */
export function runner(deps: RunDeps): Run {
  const { credentials, contexts } = deps;

  /**
   * The handler's answer, before HEAD is made of it. Not async: a sync handler's answer (a kept
   * page) is handed on as it is, without a promise and the turns of the event loop it costs.
   */
  const answer: Run = (req, url, route, input, info, record) => {
    const { requestId, meter } = record;
    const base = contexts.publicContext(req, url, requestId, input, meter, info);
    if (route.access === "public") return route.handler(base);
    const creds = record.creds = credentials.forRequest(req, meter);
    const session = contexts.sessionContext(base, creds, meter);
    if (route.access === "session") return route.handler(session);
    const inWork = (work?: AiWork) =>
      contexts.privateContext(
        session,
        creds,
        meter,
        work,
        () => record.wroteCore ??= shareFor(base),
        record.writes ??= deps.journal.open(requestId, routeName(record)),
      );
    if (!route.ai) return route.handler(inWork());
    const parserIdentity = async () => credentialIdentity(await creds.parser());
    return answerAiRoute(
      deps.aiCalls,
      withLazySignal<AiRequest>({ ...inWork(), parserIdentity }, req),
      route.ai,
      (work) => route.handler(inWork(work)),
    );
  };

  // no extra turn of the event loop unless it is HEAD: this runs on every request
  return (req, url, route, input, info, record) => {
    const res = answer(req, url, route, input, info, record);
    if (req.method !== "HEAD") return res;
    return res instanceof Promise ? res.then(headOf) : headOf(res);
  };
}

/**
 * The answer to HEAD: the GET's status and headers without its body. A streamed body is
 * cancelled (an upstream body must be released, not left to GC, and the server would read it to
 * the end); the server then sends no `Content-Length` unless the GET's answer declared one,
 * where a bodiless answer would claim 0.
 */
async function headOf(res: Response): Promise<Response> {
  await res.body?.cancel();
  if (res.body === null || res.headers.has("content-length") || NULL_BODY.has(res.status)) {
    return new Response(null, res);
  }
  return new Response(new ReadableStream({ start: (c) => c.close() }), res);
}

/** Statuses that cannot carry a body at all. */
const NULL_BODY: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

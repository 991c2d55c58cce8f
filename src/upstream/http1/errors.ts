/**
 * The client's failures, shaped as `fetch` reports its own: a `TypeError` naming the class of
 * failure and never the URL, and an abort's own reason. The backend clients map these to 502 and
 * 503 the same way whichever `fetch` they were given, so the wording is part of the contract.
 *
 * @module
 */

/**
 * The error of an answer that is no valid HTTP: a `TypeError`, as fetch reports it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(invalidResponse("bad chunk size").message, "invalid HTTP response: bad chunk size");
 * ```
 */
export function invalidResponse(reason: string): TypeError {
  return new TypeError(`invalid HTTP response: ${reason}`);
}

/**
 * The error of a connection that ended before the response did.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(closedEarly().message, "connection closed before message completed");
 * ```
 */
export function closedEarly(): TypeError {
  return new TypeError("connection closed before message completed");
}

/**
 * What an aborted call rejects with: the signal's reason, or fetch's `AbortError` without one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(abortReason(AbortSignal.abort("stop")), "stop");
 * ```
 */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The signal has been aborted", "AbortError");
}

/**
 * A failure once connected, as a `TypeError` naming its class (the backend answered badly).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const reset = networkError(new Deno.errors.ConnectionReset("os error 104"));
 * assert.equal(reset.message, "connection reset by peer");
 * ```
 */
export function networkError(e: unknown): TypeError {
  if (e instanceof TypeError) return e;
  if (e instanceof Deno.errors.ConnectionReset) {
    return new TypeError("connection reset by peer", { cause: e });
  }
  if (e instanceof Deno.errors.BrokenPipe) return new TypeError("broken pipe", { cause: e });
  const name = e instanceof Error ? e.name : "unknown";
  return new TypeError(`connection closed unexpectedly (${name})`, { cause: e });
}

/**
 * A failure to connect, as a `TypeError` naming its class (the backend was not reached).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const refused = connectError(new Deno.errors.ConnectionRefused("os error 111"));
 * assert.equal(refused.message, "connection refused");
 * ```
 */
export function connectError(e: unknown): TypeError {
  if (e instanceof Deno.errors.ConnectionRefused) {
    return new TypeError("connection refused", { cause: e });
  }
  if (e instanceof Deno.errors.TimedOut) {
    return new TypeError("connect error: timed out", { cause: e });
  }
  if (e instanceof Error && /lookup address|name or service/i.test(e.message)) {
    return new TypeError("dns error: failed to look up the address", { cause: e });
  }
  const name = e instanceof Error ? e.name : "unknown";
  return new TypeError(`connect error: ${name}`, { cause: e });
}

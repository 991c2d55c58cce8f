/** What an app says about its state when it is made: shared or per instance, never the URL. */
import assert from "node:assert/strict";
import { loadConfig } from "../config/service_config.ts";
import { jsonLogger } from "../http/log.ts";
import { createAppState } from "./app_state.ts";

const SECRET = "a-session-secret-of-at-least-32-characters";

function madeWith(env: Record<string, string>): string[] {
  const lines: string[] = [];
  const state = createAppState(
    loadConfig(env),
    Date.now,
    jsonLogger("debug", (l) => lines.push(l)),
    fetch,
  );
  state.journal.close();
  void state.store.close();
  return lines;
}

Deno.test("app state: without STATE_URL the log says what stays in this instance", () => {
  const lines = madeWith({});
  assert.ok(lines.some((l) => l.includes("no shared state store") && l.includes("STATE_URL")));
  assert.ok(!lines.some((l) => l.includes("count on every instance")));
});

Deno.test("app state: with STATE_URL the log says what is shared, and never the URL", () => {
  const url = "redis://:state-password-123@127.0.0.1:9/0";
  const lines = madeWith({ STATE_URL: url, SESSION_SECRET: SECRET });
  assert.ok(lines.some((l) => l.includes("count on every instance")));
  assert.ok(!lines.some((l) => l.includes("no shared state store")));
  assert.ok(!lines.join("\n").includes("state-password-123"));
  assert.ok(!lines.join("\n").includes("127.0.0.1:9"));
});

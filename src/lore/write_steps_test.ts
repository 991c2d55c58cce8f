import assert from "node:assert/strict";
import { ApiError } from "../http/errors.ts";
import { writeSteps } from "./write_steps.ts";

const fail = (status = 404) => () =>
  Promise.reject(new ApiError(status, "NOT_FOUND", "Note not found"));

Deno.test("writeSteps: a failure undoes completed steps newest first and keeps the cause", async () => {
  const log: string[] = [];
  const w = writeSteps();
  await w.step(
    "create",
    () => Promise.resolve("n1"),
    (id) => Promise.resolve(log.push(`delete ${id}`)),
  );
  await w.step("label", () => Promise.resolve(), "covered");
  await w.step(
    "branch",
    () => Promise.resolve("b1"),
    (b) => Promise.resolve(log.push(`unbranch ${b}`)),
  );
  const err = await w.step("relation", fail(), "covered").catch((e) => e);
  assert.deepEqual(log, ["unbranch b1", "delete n1"]);
  assert.ok(err instanceof ApiError);
  assert.equal(err.status, 404);
  assert.equal(err.code, "NOT_FOUND");
  assert.match(err.message, /while trying to relation; nothing was changed/);
  assert.deepEqual(err.details, { failedStep: "relation", rolledBack: ["branch", "create"] });
});

Deno.test("writeSteps: an undo that fails turns into PARTIAL_FAILURE listing what is left", async () => {
  const w = writeSteps();
  await w.step("create", () => Promise.resolve(1), () => Promise.reject(new Error("down")));
  await w.step("position siblings", () => Promise.resolve(), "irreversible");
  const err = await w.step("link", fail(500), "covered").catch((e) => e);
  assert.equal(err.status, 502);
  assert.equal(err.code, "PARTIAL_FAILURE");
  assert.deepEqual(err.details, {
    failedStep: "link",
    cause: "NOT_FOUND",
    completed: ["create", "position siblings"],
    rolledBack: [],
    leftBehind: ["position siblings", "create"],
  });
});

Deno.test("writeSteps: a non-API error is not exposed", async () => {
  const w = writeSteps();
  const err = await w.step("x", () => Promise.reject(new Error("secret internals")), "covered")
    .catch((e) => e);
  assert.equal(err.code, "INTERNAL_ERROR");
  assert.ok(!err.message.includes("secret internals"));
});

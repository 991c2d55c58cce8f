import assert from "node:assert/strict";
import { inOrder } from "./in_order.ts";

Deno.test("inOrder: both values in order; with two failures the first one's error", async () => {
  assert.deepEqual(await inOrder(Promise.resolve(1), Promise.resolve("two")), [1, "two"]);
  const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("first")), 5));
  await assert.rejects(inOrder(late, Promise.reject(new Error("second"))), /first/);
  await assert.rejects(inOrder(Promise.resolve(1), Promise.reject(new Error("second"))), /second/);
});

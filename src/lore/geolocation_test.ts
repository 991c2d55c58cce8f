import assert from "node:assert/strict";
import { parseGeolocation } from "./geolocation.ts";

Deno.test("parseGeolocation: two numbers with optional spaces, signs and decimals", () => {
  assert.deepEqual(parseGeolocation("120,45"), { x: 120, y: 45 });
  assert.deepEqual(parseGeolocation("120, 45"), { x: 120, y: 45 });
  assert.deepEqual(parseGeolocation("  -12.5 ,+3.25  "), { x: -12.5, y: 3.25 });
  assert.deepEqual(parseGeolocation(".5, -.25"), { x: 0.5, y: -0.25 });
  assert.deepEqual(parseGeolocation("0,0"), { x: 0, y: 0 });
  assert.deepEqual(parseGeolocation("51.5074, -0.1278"), { x: 51.5074, y: -0.1278 });
});

Deno.test("parseGeolocation: everything else is null", () => {
  for (
    const bad of [
      "",
      " ",
      "12",
      "12,",
      ",12",
      "1,2,3",
      "1;2",
      "1 2",
      "north, south",
      "1e3, 2",
      "0x10, 2",
      "Infinity, 1",
      "NaN, 1",
      "1., 2",
      "--1, 2",
      "1,,2",
      "1, 2 m",
      "９, 2", // full-width digit
      "1\n,2x",
      `${"9".repeat(400)}, 1`, // over the length bound
    ]
  ) {
    assert.equal(parseGeolocation(bad), null, `should reject ${JSON.stringify(bad)}`);
  }
});

Deno.test("parseGeolocation: long but valid values keep full precision", () => {
  assert.deepEqual(parseGeolocation(`1${"0".repeat(100)}, 1`), { x: 1e100, y: 1 });
  assert.deepEqual(parseGeolocation("0.1234567890123, -98.7654321"), {
    x: 0.1234567890123,
    y: -98.7654321,
  });
});

import assert from "node:assert/strict";
import { parseWrkReport } from "./wrk.ts";

// a report as wrk 4 prints it, with every unit and the optional error lines
const REPORT = `Running 3s test @ http://127.0.0.1:8080/api/lore
  1 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   674.07ms  294.17ms   1.31s    65.71%
    Req/Sec    13.67     12.54    53.00     93.33%
  Latency Distribution
     50%  678.50us
     75%  800.00ms
     90%    1.10s 
     99%    1.31s 
  35 requests in 3.10s, 29.64MB read
  Socket errors: connect 0, read 1, write 0, timeout 2
  Non-2xx or 3xx responses: 4
Requests/sec:     11.28
Transfer/sec:      9.55MB
`;

Deno.test("wrk report: counts, rate, percentiles in ms, errors of both kinds", () => {
  assert.deepEqual(parseWrkReport(REPORT), {
    requests: 35,
    rps: 11.28,
    p50: 0.6785,
    p99: 1310,
    errors: 7,
  });
});

Deno.test("wrk report: missing lines are NaN, no error lines are no errors", () => {
  const r = parseWrkReport("  0 requests in 1.00s, 0B read\nRequests/sec:      0.00\n");
  assert.equal(r.requests, 0);
  assert.equal(r.rps, 0);
  assert.ok(Number.isNaN(r.p50) && Number.isNaN(r.p99));
  assert.equal(r.errors, 0);
});

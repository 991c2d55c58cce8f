/** Parser error-path samples of this feature's routes. @module */
import type { ParserSample } from "./parser_sample.ts";

const mapData = { info: { mapName: "Brinemarch" }, pack: { states: [{ i: 0, name: "Neutrals" }] } };
const endpoint = "https://push.example.com/send/sample";

/** One valid request per Parser-backed route of this feature. */
export const samples: ParserSample[] = [
  {
    method: "POST",
    path: "/api/import/system-pack",
    init: { json: { notes: [{ name: "Reef Drake", cr: 3 }] } },
  },
  { method: "POST", path: "/api/import/mapgen", init: { json: { mapData } } },
  { method: "POST", path: "/api/import/mapgen?action=preview", init: { json: { mapData } } },
  { method: "GET", path: "/api/notifications/vapid-public-key" },
  {
    method: "POST",
    path: "/api/notifications/subscribe",
    init: {
      json: {
        endpoint,
        keys: { p256dh: `B${"A".repeat(86)}`, auth: "A".repeat(22) },
      },
    },
  },
  { method: "DELETE", path: "/api/notifications/unsubscribe", init: { json: { endpoint } } },
  { method: "GET", path: "/api/usage/summary?from=2026-01-01&to=2026-01-31" },
  { method: "GET", path: "/api/usage/budgets" },
  { method: "PUT", path: "/api/usage/budgets", init: { json: { dailyBudgetUsd: 2.5 } } },
  { method: "GET", path: "/api/usage/alert-status" },
];

/**
 * Usage and budgets (Parser): token and cost summaries from the Parser's model-call log, the
 * user's spending thresholds and whether they are exceeded. Answers are validated and passed on.
 *
 * Dates: `from`/`to` are calendar days (`YYYY-MM-DD`, UTC; `to` includes its whole day) or
 * ISO 8601 date-times with a zone, given together, spanning at most {@linkcode MAX_RANGE_DAYS} days.
 * Budgets: our PUT is a partial update (the Parser's own PUT replaces every field).
 *
 * @module
 */
import { z } from "zod";
import { json } from "../http/response.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { parserJson, parserRoute } from "./parser_proxy.ts";
import { parserOk } from "./schemas.ts";

/** The longest summary range, in days (the answer holds one `dailyBurn` row per day). */
export const MAX_RANGE_DAYS = 366;

const DAY_MS = 86_400_000;

/** A day or an instant, as the instant it stands for (`end`: the last millisecond of a day). */
const bound = (end: boolean) =>
  z.union([z.iso.date(), z.iso.datetime({ offset: true })]).transform((s) =>
    new Date(s.length === 10 ? `${s}T${end ? "23:59:59.999" : "00:00:00.000"}Z` : s)
  );

const summaryQuery = z.object({
  from: bound(false).optional(),
  to: bound(true).optional(),
}).superRefine(({ from, to }, ctx) => {
  const issue = (path: string, message: string) =>
    ctx.addIssue({ code: "custom", path: [path], message });
  if ((from === undefined) !== (to === undefined)) {
    issue(from === undefined ? "from" : "to", "give from and to together (or neither)");
  } else if (from && to) {
    if (from > to) issue("from", "must not be after to");
    else if (to.getTime() - from.getTime() >= MAX_RANGE_DAYS * DAY_MS) {
      issue("to", `the range may span at most ${MAX_RANGE_DAYS} days`);
    }
  }
});

const amount = z.number().finite().nonnegative();
const count = z.number().int().nonnegative();
const name = z.string().max(200);

const summaryAnswer = z.object({
  summary: z.object({
    totalTokens: count,
    totalRequests: count,
    avgLatency: amount,
    totalCostUsd: amount,
  }),
  dailyBurn: z.array(z.object({
    date: z.iso.date(),
    tokens: count,
    cost: amount,
    count,
  })).max(MAX_RANGE_DAYS + 1),
  taskCosts: z.array(z.object({
    task: name,
    tokens: count,
    cost: amount,
    count,
    avgLatency: amount,
  })),
  modelDistribution: z.array(z.object({ model: name, tokens: count, cost: amount, count })),
  latencyStats: z.array(z.object({
    task: name,
    model: name,
    count,
    avg: amount,
    p50: amount,
    p90: amount,
    p95: amount,
    p99: amount,
  })),
});

/** `GET /api/usage/summary?from=&to=` — tokens, cost and latency per day, task and model. */
export const summary = parserRoute({
  method: "GET",
  path: "/api/usage/summary",
  summary:
    "Token/cost usage per day, task and model (`from`/`to`: days or ISO date-times, together, spanning at most 366 days; default the last 30 days)",
  tag: "usage",
  query: summaryQuery,
  description: "`from`/`to` are given together or not at all: calendar days (`YYYY-MM-DD`, " +
    "UTC; `to` includes its whole day) or ISO 8601 date-times with a zone, `from` ≤ `to`, " +
    `spanning at most ${MAX_RANGE_DAYS} days; neither gives the Parser's last 30 days.`,
  responses: {
    200: {
      description:
        "Totals, one `dailyBurn` row per day, costs per task, `modelDistribution` (by cost, descending) and latency percentiles per task and model",
      schema: summaryAnswer,
    },
    400: "A bad date, only one of from/to, from after to, or a range over 366 days",
  },
  upstream: (ctx) => ({
    path: "/usage/summary",
    query: { from: ctx.query.from?.toISOString(), to: ctx.query.to?.toISOString() },
  }),
  answer: summaryAnswer,
});

/** A budget in US dollars: positive (`null` = no budget), at most a million, cents precision. */
const budget = z.number().positive().max(1_000_000).refine(
  (n) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6,
  "must have at most 2 decimals",
);

const budgetsAnswer = z.object({
  dailyBudgetUsd: amount.nullable(),
  monthlyBudgetUsd: amount.nullable(),
  alertEmail: z.string().max(320).nullable(),
});

/** `GET /api/usage/budgets` — the thresholds, each null when unset. */
export const getBudgets = parserRoute({
  method: "GET",
  path: "/api/usage/budgets",
  summary: "The user's budget thresholds (USD per day and month) and alert e-mail",
  tag: "usage",
  responses: {
    200: {
      description: "`{ dailyBudgetUsd, monthlyBudgetUsd, alertEmail }`, each null when unset",
      schema: budgetsAnswer,
    },
  },
  upstream: () => ({ path: "/usage/budgets" }),
  answer: budgetsAnswer,
});

const budgetsBody = z.strictObject({
  dailyBudgetUsd: budget.nullable().optional(),
  monthlyBudgetUsd: budget.nullable().optional(),
  alertEmail: z.email().max(254).nullable().optional(),
}).refine((b) => Object.keys(b).length > 0, "give at least one field to change");

/**
 * `PUT /api/usage/budgets` — change some thresholds. The Parser replaces all three fields on
 * every PUT (an omitted one becomes null), so the current values are read first and only the
 * given fields change; `null` clears one.
 */
export const putBudgets = defineRoute({
  method: "PUT",
  path: "/api/usage/budgets",
  summary:
    "Change budget thresholds: a partial update (omitted fields keep their value, `null` clears)",
  backend: "Parser",
  access: "private",
  tag: "usage",
  body: { kind: "json", schema: budgetsBody },
  description: "A partial update: omitted fields keep their value, `null` clears one (budgets " +
    "> 0, ≤ 1 000 000, at most 2 decimals; `alertEmail` an e-mail address). The Parser replaces " +
    "every field on its PUT, so the current budgets are read first and sent back with the " +
    "changes: two simultaneous updates can overwrite each other.",
  responses: {
    200: {
      description: "The thresholds now stored: `{ dailyBudgetUsd, monthlyBudgetUsd, alertEmail }`",
      schema: budgetsAnswer,
    },
    400: "Empty body, unknown field, a budget ≤ 0, over 1,000,000 or with more than 2 decimals, " +
      "or not an e-mail address",
  },
  handler: async (ctx) => {
    const parser = await ctx.parser();
    const current = await parserJson(parser, { path: "/usage/budgets" }, budgetsAnswer);
    const next = { ...current, ...ctx.body };
    await parserJson(parser, { method: "PUT", path: "/usage/budgets", body: next }, parserOk);
    return json(next);
  },
});

const alertStatusAnswer = z.object({
  configured: z.boolean(),
  dailySpendUsd: amount,
  monthlySpendUsd: amount,
  dailyBudgetUsd: amount.nullable(),
  monthlyBudgetUsd: amount.nullable(),
  dailyOverBudget: z.boolean(),
  monthlyOverBudget: z.boolean(),
});

/** `GET /api/usage/alert-status` — today's and this month's spend against the budgets. */
export const alertStatus = parserRoute({
  method: "GET",
  path: "/api/usage/alert-status",
  summary: "Spend today and this month (UTC) against the budgets, and whether either is exceeded",
  tag: "usage",
  responses: {
    200: {
      description:
        "`{ configured, dailySpendUsd, monthlySpendUsd, dailyBudgetUsd, monthlyBudgetUsd, dailyOverBudget, monthlyOverBudget }`",
      schema: alertStatusAnswer,
    },
  },
  upstream: () => ({ path: "/usage/alert-status" }),
  answer: alertStatusAnswer,
});

/** The usage routes. */
export const usageRoutes: Route[] = [summary, getBudgets, putBudgets, alertStatus];

/**
 * What a render of public content asked of the share, recorded, so that what it made can be
 * reused on a later snapshot exactly while every question still gets the same answer. A render
 * reads the share only through its {@linkcode PublicLinkPolicy} (which notes are public, what
 * this visitor may see, a link target's title, type and alias, a page's path), so a note whose
 * content and own facts are unchanged renders the same bytes whenever its recorded questions
 * replay the same: a draft hidden elsewhere re-renders exactly the notes that linked to it.
 *
 * @module
 */
import { z } from "zod";
import type { LinkTarget, PublicLinkPolicy } from "./link_policy.ts";

/** One question a render asked of the policy, and its answer. */
export type PolicyAnswer = readonly [question: Question, arg: string, answer: string];

/** A value made by a render, and the questions that render asked of the share. */
export interface Kept<T> {
  answers: readonly PolicyAnswer[];
  value: T;
}

const QUESTIONS = ["root", "isPublic", "canSee", "target", "resolve", "pagePath"] as const;
type Question = typeof QUESTIONS[number];

/** A recorded answer as read back from disk: a malformed one is never replayed. */
export const policyAnswerSchema: z.ZodType<PolicyAnswer> = z.tuple([
  z.enum(QUESTIONS),
  z.string(),
  z.string(),
]).readonly();

const ask: Record<Question, (p: PublicLinkPolicy, arg: string) => string> = {
  root: (p) => p.rootId,
  isPublic: (p, id) => (p.isPublic(id) ? "1" : ""),
  canSee: (p, id) => (p.canSee(id) ? "1" : ""),
  target: (p, id) => targetText(p.target(id)),
  resolve: (p, ref) => p.resolve(ref) ?? "",
  pagePath: (p, id) => p.pagePath(id),
};

function targetText(t: LinkTarget | undefined): string {
  return t === undefined ? "" : JSON.stringify([t.noteId, t.title, t.type, t.alias]);
}

/**
 * A policy that answers as `policy` does and writes down every question and answer in
 * `answers` (the share root's id first: relative links resolve against it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { PublicLinkPolicy } from "./link_policy.ts";
 * const policy: PublicLinkPolicy = {
 *   rootId: "guide",
 *   isPublic: (id) => id === "harbor",
 *   canSee: (id) => id === "harbor",
 *   target: () => undefined,
 *   resolve: (ref) => ref,
 *   pagePath: (id) => `/public/lore/${id}`,
 *   backendHosts: new Set(),
 * };
 * const { recording, answers } = recordingPolicy(policy);
 * assert.equal(recording.isPublic("harbor"), true);
 * assert.equal(stillAnswered(answers, policy), true);
 * assert.equal(stillAnswered(answers, { ...policy, isPublic: () => false }), false);
 * ```
 */
export function recordingPolicy(
  policy: PublicLinkPolicy,
): { recording: PublicLinkPolicy; answers: PolicyAnswer[] } {
  const answers: PolicyAnswer[] = [["root", "", policy.rootId]];
  const asked = new Set<string>();
  const note = <T>(question: Question, arg: string, value: T, text: string): T => {
    const key = `${question}\n${arg}`;
    if (!asked.has(key)) asked.add(key), answers.push([question, arg, text]);
    return value;
  };
  const recording: PublicLinkPolicy = {
    rootId: policy.rootId,
    backendHosts: policy.backendHosts,
    isPublic: (id) => {
      const v = policy.isPublic(id);
      return note("isPublic", id, v, v ? "1" : "");
    },
    canSee: (id) => {
      const v = policy.canSee(id);
      return note("canSee", id, v, v ? "1" : "");
    },
    target: (id) => {
      const v = policy.target(id);
      return note("target", id, v, targetText(v));
    },
    resolve: (ref) => {
      const v = policy.resolve(ref);
      return note("resolve", ref, v, v ?? "");
    },
    pagePath: (id) => {
      const v = policy.pagePath(id);
      return note("pagePath", id, v, v);
    },
  };
  return { recording, answers };
}

/** How a policy answers one recorded question, as the text recorded. */
export type Answerer = (question: PolicyAnswer[0], arg: string) => string;

/**
 * The answers of `policy`, each worked out once: one snapshot's answers to the few thousand
 * questions its notes' readings recorded, shared by every reading checked against it.
 */
export function answerer(policy: PublicLinkPolicy): Answerer {
  const memo = new Map<string, string>();
  return (question, arg) => {
    const key = `${question}\n${arg}`;
    let answer = memo.get(key);
    if (answer === undefined) memo.set(key, answer = ask[question](policy, arg));
    return answer;
  };
}

/** Whether `policy` answers every recorded question as it was answered then. */
export function stillAnswered(
  answers: readonly PolicyAnswer[],
  policy: PublicLinkPolicy | Answerer,
): boolean {
  const answer = typeof policy === "function" ? policy : answerer(policy);
  return answers.every(([question, arg, recorded]) => answer(question, arg) === recorded);
}

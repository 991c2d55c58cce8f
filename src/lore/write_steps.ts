/**
 * Multi-step writes that either complete or say exactly what happened. Each step may register an
 * undo; when a later step fails, completed steps are undone newest first. If every undo works the
 * caller sees the original error ("nothing was changed"); if an undo fails too, a 502
 * `PARTIAL_FAILURE` lists what was done, undone and left behind.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";

/** How a completed step is taken back. */
export type Undo<T> = ((result: T) => Promise<unknown>) | "covered" | "irreversible";

/** A write in progress. */
export interface WriteSteps {
  /**
   * Runs one step; on failure rolls back everything before it and throws. `undo` reverses the
   * step, `"covered"` means an earlier step's undo also removes this one (an attribute of a note
   * whose creation is undone), `"irreversible"` means it cannot be taken back.
   */
  step<T>(name: string, run: () => Promise<T>, undo: Undo<T>): Promise<T>;
  /** Names of the steps completed so far. */
  readonly completed: readonly string[];
}

/**
 * Starts a write.
 *
 * @example
 * ```ts
 * import type { CoreClient } from "../upstream/core.ts";
 *
 * async function loreNote(core: CoreClient, title: string) {
 *   const w = writeSteps();
 *   const { note } = await w.step(
 *     "create the note",
 *     () => core.createNote({ parentNoteId: "root", title, type: "text", content: "" }),
 *     (r) => core.deleteNote(r.note.noteId),
 *   );
 *   const label = { noteId: note.noteId, type: "label" as const, name: "lore", value: "" };
 *   await w.step("add #lore", () => core.createAttribute(label), "covered");
 *   return note;
 * }
 * ```
 */
export function writeSteps(): WriteSteps {
  const done: Done[] = [];
  return {
    get completed() {
      return done.map((d) => d.name);
    },
    async step(name, run, undo) {
      let result;
      try {
        result = await run();
      } catch (cause) {
        throw await rollBack(name, cause, done);
      }
      done.push({
        name,
        undo: typeof undo === "function" ? () => undo(result) : undo,
      });
      return result;
    },
  };
}

interface Done {
  name: string;
  undo: (() => Promise<unknown>) | "covered" | "irreversible";
}

async function rollBack(failedStep: string, cause: unknown, done: Done[]): Promise<ApiError> {
  const undone: string[] = [];
  const leftBehind: string[] = [];
  for (const d of [...done].reverse()) {
    if (d.undo === "covered") continue;
    if (d.undo === "irreversible") {
      leftBehind.push(d.name);
      continue;
    }
    try {
      await d.undo();
      undone.push(d.name);
    } catch {
      leftBehind.push(d.name);
    }
  }
  // a step that already reports a partial failure of its own keeps its exact account
  if (cause instanceof ApiError && cause.code === "PARTIAL_FAILURE" && leftBehind.length === 0) {
    return cause;
  }
  const base = cause instanceof ApiError
    ? cause
    : new ApiError(500, "INTERNAL_ERROR", "The write failed inside the service");
  if (leftBehind.length === 0) {
    return new ApiError(
      base.status,
      base.code,
      `${base.message} (while trying to ${failedStep}; nothing was changed)`,
      { ...(isObject(base.details) ? base.details : {}), failedStep, rolledBack: undone },
      base.headers,
    );
  }
  return new ApiError(
    502,
    "PARTIAL_FAILURE",
    `Failed to ${failedStep}: ${base.message}; some changes could not be undone`,
    {
      failedStep,
      cause: base.code,
      completed: done.map((d) => d.name),
      rolledBack: undone,
      leftBehind,
    },
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

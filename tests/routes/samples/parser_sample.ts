/**
 * The shape of one Parser error-path sample (see parser_error_paths_test.ts). Each feature keeps
 * its samples in its own file here, so the matrix runs over every Parser-backed route.
 *
 * @module
 */

/** One valid request to a Parser-backed route. */
export interface ParserSample {
  method: string;
  /** Our path, with query; ids need not exist (the Parser is faulted). */
  path: string;
  init?: RequestInit & { json?: unknown };
  /**
   * Expected status when the Parser answers 404 to everything (default 404). Routes whose
   * answer merges Core data with optional Parser data document their own meaning here.
   */
  on404?: number;
  /**
   * The route streams before the Parser is called (its head is already sent): failures arrive
   * as a terminal SSE `error` event carrying the code, with HTTP 200.
   */
  streamsFirst?: boolean;
  /**
   * The route still answers from Core when the Parser fails (e.g. mention search): the matrix
   * expects this status for every Parser failure instead of the mapped error.
   */
  degradesTo?: number;
  /**
   * The route reads its JSON answer from a Parser SSE stream (an AI route whose work has one):
   * faults that leave a stream's bytes alone (non-JSON replaced, others not) do not break it.
   */
  fromStream?: boolean;
}

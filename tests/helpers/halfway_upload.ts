/**
 * An upload whose body arrives in two parts, with something done in between (e.g. the service
 * told to stop): the first part goes out, the service starts on the request, `between` runs, then
 * the rest follows.
 */
import { makePng } from "../../sims/world.ts";
import { eventually } from "./manual_deadlines.ts";

/** What {@linkcode uploadHalfway} needs. */
export interface HalfwayUpload {
  /** The service's base URL. */
  url: string;
  /** The file name given in `x-host-filename`. */
  filename: string;
  /** Extra request headers (a session cookie). */
  headers?: Record<string, string>;
  /** True once the service has started on the request (e.g. the Core double saw a call). */
  started(): boolean;
  /** Runs while the body is half sent. */
  between(): void;
}

/** Sends a small PNG to `POST /api/lore/upload-image` in two parts; resolves with the answer. */
export async function uploadHalfway(u: HalfwayUpload): Promise<Response> {
  const png = makePng(64, 48, () => [40, 90, 160]);
  let push!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (ctl) => push = ctl });
  push.enqueue(png.subarray(0, 100));
  const answer = fetch(`${u.url}/api/lore/upload-image`, {
    method: "POST",
    headers: { "content-type": "image/png", "x-host-filename": u.filename, ...u.headers },
    body,
  });
  await eventually("the upload is under way", u.started);
  u.between();
  push.enqueue(png.subarray(100));
  push.close();
  return await answer;
}

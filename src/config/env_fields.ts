/**
 * The kinds of value a setting holds, as zod fields that read an environment string: bounded
 * integers, booleans, backend URLs and lists of them, web origins, host names and note ids. Each
 * says what is wrong in one line (service_config.ts lists them all at start-up).
 *
 * @module
 */
import { z } from "zod";
import { type Backend, backendBaseUrl } from "./backend_url.ts";
import { hostNameOf } from "../util/host_name.ts";

export const intIn = (min: number, max: number, def: number) =>
  z.coerce.number().int().min(min).max(max).default(def);

export const bool = (def: boolean) =>
  z.enum(["true", "false", "1", "0", "yes", "no"]).default(def ? "true" : "false")
    .transform((v) => v === "true" || v === "1" || v === "yes");

/**
 * A backend base URL under the rule of {@linkcode backendBaseUrl} (Core's trailing `/etapi`
 * removed, a path naming a Parser route refused). The input stays a URL for the generated docs.
 */
export const backendUrl = (backend: Backend) =>
  z.url({ protocol: /^https?$/ }).transform((v, ctx) => {
    const r = backendBaseUrl(backend, v);
    if (r.ok) return r.url;
    ctx.addIssue({ code: "custom", message: r.message });
    return z.NEVER;
  });

export const splitList = (v: string) => v.split(",").map((p) => p.trim()).filter(Boolean);

/**
 * A comma-separated list, each entry read by `entry`: its value, or why it is refused. The first
 * refused entry fails the variable, named by its position: an entry with credentials in it must
 * not be printed back.
 */
export const listOf = (entry: (part: string) => { value: string } | { message: string }) =>
  z.string().transform((v, ctx) => {
    const out: string[] = [];
    for (const [i, part] of splitList(v).entries()) {
      const r = entry(part);
      if ("message" in r) {
        ctx.addIssue({ code: "custom", message: `entry ${i + 1}: ${r.message}` });
        return z.NEVER;
      }
      out.push(r.value);
    }
    return out;
  });

/** A comma-separated list of backend base URLs (extra allow-list entries). */
export const urlList = (backend: Backend) =>
  listOf((part) => {
    const r = backendBaseUrl(backend, part);
    return r.ok ? { value: r.url } : { message: r.message };
  });

/**
 * A web origin (scheme, host, optional port, nothing else) as browsers send `Origin`: lower-case
 * host, default port left out. Undefined for anything else.
 */
function webOrigin(text: string): string | undefined {
  try {
    const url = new URL(text);
    const bare = url.pathname === "/" && !url.search && !url.hash &&
      !url.username && !url.password && !text.includes("?") && !text.includes("#");
    if (bare && /^https?:$/.test(url.protocol)) return url.origin;
  } catch {
    // not a URL
  }
  return undefined;
}

/** A comma-separated list of web origins: scheme, host and optional port, nothing else. */
export const originList = listOf((part) => {
  const origin = webOrigin(part);
  return origin !== undefined
    ? { value: origin }
    : { message: "must be an http(s) origin such as https://app.example.org (no path, no `*`)" };
});

/** The site's public origin: one web origin. */
export const publicOrigin = z.string().transform((v, ctx) => {
  const origin = webOrigin(v);
  if (origin !== undefined) return origin;
  ctx.addIssue({
    code: "custom",
    message: "must be an http(s) origin such as https://lore.example.org (no path, query or " +
      "credentials)",
  });
  return z.NEVER;
});

/** Labels of letters, digits, `-` and `_` (container names have them), as the URL parser writes. */
const HOST_NAME = /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;

/** A comma-separated list of host names without port, normalised as requests' hosts are. */
export const hostList = listOf((part) => {
  const name = part.includes(":") && !part.startsWith("[") ? undefined : hostNameOf(part);
  const plain = name !== undefined &&
    (name.startsWith("[") ? part.endsWith("]") : HOST_NAME.test(name));
  return plain ? { value: name } : {
    message: "must be a host name such as lore.example.org (no scheme, port, path or `*`: list " +
      "every name)",
  };
});

export const noteId = z.string().regex(/^[A-Za-z0-9_]{1,128}$/, "must be a note id");

/**
 * A Redis URL (`STATE_URL`): `redis://` or `rediss://` (TLS), a host, optionally a user name and
 * password and a database number as the path; no query or fragment. Its text never reaches a
 * log line or an answer, since it may carry a password.
 */
export const stateUrl = z.string().transform((v, ctx) => {
  let url: URL | undefined;
  try {
    url = new URL(v);
  } catch {
    url = undefined;
  }
  const ok = url && (url.protocol === "redis:" || url.protocol === "rediss:") && url.hostname &&
    !url.search && !url.hash && /^\/?\d{0,2}$/.test(url.pathname);
  if (ok) return v;
  ctx.addIssue({
    code: "custom",
    message: "must be a Redis URL such as redis://:password@state:6379/0 (or rediss:// for TLS)",
  });
  return z.NEVER;
});

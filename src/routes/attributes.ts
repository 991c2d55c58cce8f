import type { Route } from "../router.ts";

/** Routes of this group. */
export const attributeRoutes: Route[] = [];

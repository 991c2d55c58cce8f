import assert from "node:assert/strict";
import { isSiteReturnPath, unlockPageResponse } from "./unlock_page.ts";

Deno.test("isSiteReturnPath: pages of this site only, exactly as a request names them", () => {
  for (const path of ["/", "/?q=lantern%20light", "/public", "/public/", "/public/lore/vault"]) {
    assert.equal(isSiteReturnPath(path), true, path);
  }
  const away = [
    "https://evil.example/public",
    "//evil.example/public",
    "///evil.example",
    "/\\evil.example",
    "\\/evil.example",
    "/public\\..\\..\\evil",
    "/public/../api/lore",
    "/public/%2e%2e/api",
    "/public/lore/x#top",
    "/public/lore/a b",
    "/public/lore/\u00e4",
    "/public\r\nSet-Cookie: x=1",
    "javascript:alert(1)",
    "data:text/html,x",
    "public/lore/x",
    "",
    "/api/public/lore/x",
    "/publicity",
    "/public/unlock",
    "/public/lock",
    `/public/${"x".repeat(2048)}`,
  ];
  for (const path of away) assert.equal(isSiteReturnPath(path), false, JSON.stringify(path));
});

Deno.test("unlockPageResponse: an accessible form; a problem is announced and names its fields", async () => {
  const first = unlockPageResponse({ returnTo: "/public/lore/vault", world: "The Coast" });
  assert.equal(first.status, 401);
  assert.equal(first.headers.get("www-authenticate"), null);
  assert.equal(first.headers.get("cache-control"), "no-store");
  assert.equal(first.headers.get("x-robots-tag"), "noindex");
  const page = await first.text();
  assert.match(page, /<title>Password required · The Coast<\/title>/);
  assert.match(page, /<label for="unlock-user">Name<\/label>\s*<input id="unlock-user"/);
  assert.match(
    page,
    /<label for="unlock-password">Password<\/label>\s*<input id="unlock-password"/,
  );
  assert.match(page, /autocomplete="current-password" required>/);
  assert.ok(!page.includes('role="alert"'));

  const wrong = await unlockPageResponse({
    returnTo: "/public/lore/vault",
    problem: "wrong",
    user: '"><script>',
  }).text();
  assert.match(wrong, /<p class="form-problem" id="unlock-problem" role="alert">/);
  assert.equal(wrong.match(/aria-describedby="unlock-problem"\s+aria-invalid="true"/g)?.length, 2);
  assert.match(wrong, /value="&quot;&gt;&lt;script&gt;"/, "the name typed, escaped");

  const busy = unlockPageResponse({ returnTo: "/", problem: "busy" }, 60);
  assert.equal(busy.status, 429);
  assert.equal(busy.headers.get("retry-after"), "60");
  assert.match(await busy.text(), /role="alert">Too many attempts/);
});

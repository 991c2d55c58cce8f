import assert from "node:assert/strict";
import { html, trusted } from "./html.ts";

Deno.test("html: every interpolated string is escaped, in text and in attributes", () => {
  const evil = `"><script>alert('x')</script>&`;
  const out = html`<a title="${evil}">${evil}</a>`.html;
  assert.equal(
    out,
    `<a title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">` +
      `&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</a>`,
  );
  assert.ok(!out.includes("<script"));
});

Deno.test("html: nested templates and arrays are kept, falsy values render nothing", () => {
  const items = ["<a>", "b"].map((t) => html`<li>${t}</li>`);
  const out = html`<ul>${items}</ul>${null}${undefined}${false}${0}`.html;
  assert.equal(out, "<ul><li>&lt;a&gt;</li><li>b</li></ul>0");
});

Deno.test("html: only trusted() inserts markup as is; look-alike objects are escaped", () => {
  assert.equal(html`<div>${trusted("<p>ok</p>")}</div>`.html, "<div><p>ok</p></div>");
  const forged = { html: "<script>x</script>" } as unknown as string;
  assert.equal(html`${forged}`.html, "[object Object]");
});

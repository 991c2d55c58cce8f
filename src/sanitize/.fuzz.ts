import { sanitizeLoreHtml as L, sanitizePlayerHtml as P } from "./html.ts";
let seed = Number(Deno.args[0] ?? 1);
const rnd = () => { seed = (seed + 0x6d2b79f5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
const pick = <T,>(a: T[]) => a[Math.floor(rnd() * a.length)];
const TAGS = ["p","div","span","b","i","table","tr","td","tbody","li","ul","ol","a","font","section","noscript","select","textarea","title","svg","math","template","style","pre","h1","details","summary","form","center","iframe","xmp","noembed","plaintext","caption","col","colgroup","dl","dt","dd","figure"];
const GM = ["p","div","span","b","i","table","tr","td","li","ul","a","font","section","center","details","summary","h1","pre","blockquote","dl","dd","figure","tbody","caption"];
const pieces = () => {
  const r = rnd();
  if (r < 0.25) return `<${pick(TAGS)}>`;
  if (r < 0.45) return `</${pick(TAGS)}>`;
  if (r < 0.6) return `<${pick(GM)} class="${pick(["gm-only","x GM-only y","Gm-Only"])}">SECRET`;
  if (r < 0.7) return pick(["text", "&amp;", "&lt;b&gt;", "\"", "'", ">", "<", "<!--", "-->", "<![CDATA[", "]]>"]);
  if (r < 0.8) return pick([`<img src=x onerror=alert(1)>`, `<img src="api/images/abc/x.png">`, `<a href="javascript:alert(1)">j</a>`, `<p title="</noscript><img src=x onerror=alert(1)>">`, `<br>`, `<hr>`]);
  if (r < 0.9) return `<${pick(TAGS)} title="${pick(["</"+pick(TAGS)+">", "\"><script>alert(1)</script>", "x"])}">`;
  return pick(["<script>alert(1)</script>", "</p>", "</br>", "<p/>", "<div/>", "<tr>"]);
};
let fails = 0;
const N = Number(Deno.args[1] ?? 20000);
const t0 = performance.now();
for (let n = 0; n < N; n++) {
  let doc = ""; const k = 1 + Math.floor(rnd() * 30); for (let j = 0; j < k; j++) doc += pieces();
  const l = L(doc), p = P(doc);
  const problems = [];
  if (p.includes("SECRET")) problems.push("secret");
  if (L(l) !== l) problems.push("lore-idem");
  if (P(p) !== p) problems.push("player-idem");
  for (const o of [l, p]) { if (/<script|<style|<svg|<math|<noscript|<iframe|<textarea|<title|<template|\son\w+=|javascript:|<img(?![^>]*src="\/api\/lore\/)/i.test(o)) problems.push("danger:" + o); }
  if (problems.length) { fails++; if (fails < 8) console.log(JSON.stringify(doc), problems, "\n L:", JSON.stringify(l), "\n L2:", JSON.stringify(L(l)), "\n P:", JSON.stringify(p)); }
}
console.log("fails", fails, "of", N, "ms", Math.round(performance.now() - t0));

/// <reference lib="dom" />
/**
 * The sanitizers against Chromium's own HTML parser. For a corpus of malformed shapes
 * (mis-nesting, foster parenting, `template`, `select`, `object`, tables, foreign content,
 * unclosed tags, comments and CDATA tricks) and a seeded generator of random malformed trees:
 * - player view: Chromium parses the INPUT and says which text lies inside a `gm-only` element;
 *   none of that text may be in what Chromium shows of our player output;
 * - lore view: Chromium parses and renders our output as a page; no script, handler,
 *   `javascript:` URL or embedding element survives, and nothing runs.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { sanitizeLoreHtml, sanitizePlayerHtml } from "../../src/sanitize/html.ts";
import { loadHtmlEngine } from "../../src/sanitize/html_engine.ts";
import { browserTestsRun, withBrowser } from "../helpers/browser.ts";
import { prng, propertySeed } from "../helpers/prng.ts";

await loadHtmlEngine();

const SUITE = "sanitizers against Chromium";

/** Malformed shapes that have split browsers and lenient tokenizers; `S` marks GM-only text. */
const SHAPES: string[] = [
  '<p>Welcome.</p><div class="gm-only"><object></div>S</object></div>',
  '<div class="gm-only"><applet></div>S</applet></div>',
  '<div class="gm-only"><marquee></div>S</marquee></div>',
  '<div class="gm-only"><template></div>S</template></div>after',
  '<table><tr><td class="gm-only"></td>S</td></tr></table>',
  '<table><tr><td><div class="gm-only"></td>S</div></td></tr></table>',
  '<table><caption class="gm-only"></caption>S</caption></table>',
  '<table><caption><div class="gm-only"></caption>S</div></caption></table>',
  '<select><option class="gm-only"></option>S</select>',
  '<div class="gm-only"><select></div>S</select></div>',
  '<table class="gm-only">S<tr><td>x</td></tr></table>',
  '<table class="gm-only"><tr>S<td>x</td></tr></table>',
  '<tr class="gm-only">S</tr>',
  '<td class="gm-only">S</td>',
  '<b class="gm-only">a<p>S</b>b</p>',
  '<a class="gm-only"><a>S</a></a>',
  '<p class="gm-only">S<p>public',
  '<ul><li class="gm-only">S<li>public</ul>',
  '<svg><desc class="gm-only"><p>S</p></desc></svg>',
  '<svg><foreignObject class="gm-only"><p>S</p></foreignObject></svg>after',
  '<math><mi class="gm-only">S</mi></math>',
  '<math><mtext><div class="gm-only">S</div></mtext></math>',
  '<svg><![CDATA[</svg><div class="gm-only">]]>S</div>',
  '<p>a<![CDATA[<div class="gm-only">]]>S</div>',
  '<!--<div class="gm-only">-->S<!--</div>-->',
  '<div class="gm-only"><!--</div>-->S</div>',
  '<div class="gm-only"><textarea></div>S</textarea></div>',
  '<div class="gm-only"><xmp></div>S</xmp></div>',
  '<div class="gm-only"><noscript></div>S</noscript></div>',
  '<div class="gm-only"><iframe></div>S</iframe></div>',
  '<div class="gm-only"><style></div>S</style></div>',
  '<div class="gm-only"><script></div>S</script></div>',
  '<div class="gm-only"><title></div>S</title></div>',
  '<div class="gm-only"><plaintext></div>S',
  '<form class="gm-only"><form>S</form></form>',
  '<div class="GM-only">S</div><div class=" x\tgm-only\n">S</div><div class=gm-only>S</div>',
  '<div class="gm-only"><div>S',
  '<div class="gm-only"><table><td>S</table>',
  '<p class="gm-only"><table>S</table></p>',
  '<div class="gm-only"></div/>S</div>',
  '<div class="gm-only"</div>S</div>',
  '<div class="gm-only"/>S</div>',
  '<image class="gm-only">S</image>',
  '<isindex class="gm-only">S',
  '<frameset class="gm-only">S</frameset>',
  '<body class="gm-only">S</body>',
  '<html class="gm-only">S</html>',
  '<font class="gm-only">S</font><center class="gm-only">S</center>',
  '<nobr class="gm-only"><nobr>S</nobr></nobr>',
  '<button class="gm-only"><button>S</button></button>',
  '<dd class="gm-only">S<dt>x</dt><dd>y',
  '<h1 class="gm-only"><h2>S</h2></h1>',
  '<ruby class="gm-only"><rb>S<rt>x</ruby>',
];

// Tags and fragments for the generator: structure, formatting, tables, raw text, foreign content.
// deno-fmt-ignore
const TAGS = [
  "div", "p", "span", "b", "i", "a", "li", "ul", "table", "tr", "td", "th", "caption", "tbody",
  "select", "option", "object", "applet", "marquee", "template", "svg", "math", "desc",
  "foreignObject", "mtext", "textarea", "xmp", "noscript", "iframe", "style", "title", "form",
  "button", "font", "center", "h1", "dd", "dt", "nobr", "section", "details", "summary",
];
// deno-fmt-ignore
const JUNK = [
  "<!--", "-->", "<![CDATA[", "]]>", "<br>", "</br>", "<p/>", "<", ">", "&", "&lt;", "'", '"',
  "<img src=x onerror=alert(1)>", "<script>alert(1)</script>",
];

/** A random malformed document; gm-only elements hold `S` markers, other text is plain. */
function randomTree(rng: () => number): string {
  const pick = <T>(items: readonly T[]) => items[Math.floor(rng() * items.length)];
  const open: { tag: string; gm: boolean }[] = [];
  let out = "";
  for (let i = 0, n = 5 + Math.floor(rng() * 25); i < n; i++) {
    const r = rng();
    if (r < 0.35) {
      const tag = pick(TAGS);
      const gm = rng() < 0.35;
      open.push({ tag, gm });
      out += gm ? `<${tag} class="gm-only">` : `<${tag}>`;
    } else if (r < 0.55 && open.length) {
      // close the innermost, or (mis-nesting) any other open element, or a stray tag
      const k = rng() < 0.7 ? open.length - 1 : Math.floor(rng() * open.length);
      out += `</${open.splice(k, 1)[0].tag}>`;
    } else if (r < 0.65) {
      out += `</${pick(TAGS)}>`;
    } else if (r < 0.75) {
      out += pick(JUNK);
    } else {
      out += open.some((o) => o.gm) ? "S" : "pub";
    }
  }
  return out;
}

/** Numbers every `S` so each secret can be traced: `S` → `SECRET<case>x<k>Z`. */
function mark(html: string, caseNo: number): string {
  let k = 0;
  return html.replace(/S(?![a-z])/g, () => `SECRET${caseNo}x${k++}Z`);
}

/**
 * Per case: the secrets Chromium puts inside a gm-only element when it parses the input (in a
 * `<div>`, like our pages), and every secret Chromium shows of our player output.
 */
async function chromiumVerdicts(
  page: Page,
  cases: { input: string; player: string }[],
): Promise<{ hidden: string[]; shown: string[] }[]> {
  return await page.evaluate((cases) => {
    const gmOnly = (el: Element) => [...el.classList].some((c) => c.toLowerCase() === "gm-only");
    const textIn = (root: Node): string => {
      // template contents are a separate fragment: include them, they are in the markup
      let text = "";
      const walk = (node: Node) => {
        if (node.nodeType === Node.TEXT_NODE) text += node.nodeValue;
        if (node instanceof HTMLTemplateElement) walk(node.content);
        node.childNodes.forEach(walk);
      };
      walk(root);
      return text;
    };
    const secrets = (text: string) => text.match(/SECRET\d+x\d+Z/g) ?? [];
    return cases.map(({ input, player }) => {
      const source = document.createElement("div");
      source.innerHTML = input;
      const hidden = new Set<string>();
      const visit = (node: Node) => {
        if (node instanceof Element && gmOnly(node)) {
          secrets(textIn(node)).forEach((s) => hidden.add(s));
        }
        if (node instanceof HTMLTemplateElement) visit(node.content);
        node.childNodes.forEach(visit);
      };
      visit(source);
      const out = document.createElement("div");
      out.innerHTML = player;
      return { hidden: [...hidden], shown: secrets(textIn(out)) };
    });
  }, cases);
}

/** Player view: no text Chromium places in a gm-only element survives our output. */
async function playerView(browser: Browser): Promise<void> {
  const page = await browser.newPage();
  // The raw inputs are parsed in this page: their handlers may fire (that is not our output)
  page.on("dialog", (d) => d.dismiss().catch(() => {}));
  await page.setContent("<!DOCTYPE html><title>t</title><body></body>");
  const seed = propertySeed(20261123);
  const rng = prng(seed);
  const inputs = [...SHAPES, ...Array.from({ length: 600 }, () => randomTree(rng))]
    .map((html, i) => mark(html, i));
  const cases = inputs.map((input) => ({ input, player: sanitizePlayerHtml(input) }));
  const verdicts = await chromiumVerdicts(page, cases);
  let secretsChecked = 0;
  for (const [i, { hidden, shown }] of verdicts.entries()) {
    secretsChecked += hidden.length;
    const leaked = shown.filter((s) => hidden.includes(s));
    assert.deepEqual(leaked, [], `seed ${seed} case ${i}: ${inputs[i]}\n→ ${cases[i].player}`);
  }
  // the hand-made shapes really put text in gm-only elements (the check is not vacuous)
  assert.ok(secretsChecked > SHAPES.length, `only ${secretsChecked} secrets checked`);
  // and the player view is not empty for everything: public text survives
  assert.ok(cases.filter((c) => c.player.includes("pub")).length > 100);
  await page.close();
}

/** Script vectors mixed into malformed shapes; each would call `__pwned()` or open a dialog. */
const VECTORS = [
  "<script>__pwned('script')</script>",
  "<img src=x onerror=__pwned('img')>",
  "<svg><script>__pwned('svg')</script></svg>",
  "<svg onload=__pwned('svgload')></svg>",
  "<math><mtext><table><mglyph><style><img src=x onerror=__pwned('mxss')>",
  "<noscript><p title=\"</noscript><img src=x onerror=__pwned('noscript')>\">",
  "<a href=\"javascript:__pwned('href')\">x</a>",
  "<a href=\"jav&#x09;ascript:__pwned('tab')\">x</a>",
  "<iframe srcdoc=\"<script>parent.__pwned('srcdoc')</script>\"></iframe>",
  "<object data=\"javascript:__pwned('object')\"></object>",
  "<embed src=\"javascript:__pwned('embed')\">",
  "<form><button formaction=\"javascript:__pwned('form')\">x</button></form>",
  "<details open ontoggle=__pwned('toggle')>",
  "<body onload=__pwned('body')>",
  "<style>@import 'javascript:__pwned(1)';</style>",
  "<template><img src=x onerror=__pwned('template')></template>",
  "<select><template><img src=x onerror=__pwned('select')></template></select>",
  "<table><td><img src=x onerror=__pwned('table')></td></table>",
  "<!--><img src=x onerror=__pwned('comment')>-->",
  "<xmp></xmp><img src=x onerror=__pwned('xmp')>",
  "<svg><![CDATA[><img src=x onerror=__pwned('cdata')>]]></svg>",
  "<p style=\"background:url(javascript:__pwned('css'))\">x</p>",
  "<div id=__pwned name=__pwned>clobber</div>",
];

/** Lore view: nothing executable survives Chromium's parse of our output, nothing runs. */
async function loreView(browser: Browser): Promise<void> {
  const page = await browser.newPage();
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {}); // the page may already be gone
  });
  // document.write keeps the window, so this outlives every setContent below
  await page.evaluate(() => {
    const calls: string[] = [];
    Object.defineProperty(globalThis, "__calls", { value: calls });
    Object.defineProperty(globalThis, "__pwned", {
      value: (what: string) => calls.push(String(what)),
    });
  });
  const seed = propertySeed(20261123);
  const rng = prng(seed + 1);
  const pick = <T>(items: readonly T[]) => items[Math.floor(rng() * items.length)];
  const inputs = [
    ...VECTORS,
    ...SHAPES.map((shape) => shape.replace("S", pick(VECTORS))),
    ...Array.from(
      { length: 300 },
      () => randomTree(rng).replace(/S|pub/g, () => pick(VECTORS)),
    ),
  ];
  for (const sanitize of [sanitizeLoreHtml, sanitizePlayerHtml]) {
    const outputs = inputs.map((html) => sanitize(html));
    // One page per batch, parsed and rendered as a page would be (handlers fire, scripts run).
    await page.setContent(
      "<!DOCTYPE html><title>t</title><body>" +
        outputs.map((out, i) => `<div data-case="${i}">${out}</div>`).join("") +
        "</body>",
    );
    await page.waitForTimeout(50); // let image errors and toggles fire
    const found = await page.evaluate(() => {
      const bad: string[] = [];
      for (const el of document.body.querySelectorAll("*")) {
        const tag = el.tagName.toLowerCase();
        if (
          ["script", "iframe", "object", "embed", "style", "svg", "math", "form", "button"]
            .includes(tag)
        ) bad.push(`<${tag}>`);
        for (const attr of el.attributes) {
          if (/^on/i.test(attr.name)) bad.push(`${tag}[${attr.name}]`);
          if (/^(?:id|name|srcdoc|formaction)$/i.test(attr.name)) {
            bad.push(`${tag}[${attr.name}]`);
          }
          if (/^\s*(?:javascript|vbscript|data):/i.test(attr.value)) {
            bad.push(`${tag}[${attr.name}=${attr.value.slice(0, 20)}]`);
          }
        }
      }
      return { bad, calls: (globalThis as unknown as { __calls: string[] }).__calls };
    });
    assert.deepEqual(
      found.bad,
      [],
      `seed ${seed} ${sanitize.name}: executable markup in Chromium's tree`,
    );
    assert.deepEqual(found.calls, [], `seed ${seed} ${sanitize.name}: script ran`);
    assert.deepEqual(dialogs, []);
  }
  await page.close();
}

// One browser for both views: starting Chromium costs more than either check.
Deno.test({
  name: "sanitizers against Chromium",
  ignore: !browserTestsRun(SUITE),
  fn: (t) =>
    withBrowser(async (browser) => {
      await t.step(
        "player view: no text Chromium places in a gm-only element survives our output",
        () => playerView(browser),
      );
      await t.step(
        "lore view: nothing executable survives Chromium's parse of our output, nothing runs",
        () => loreView(browser),
      );
    }),
});

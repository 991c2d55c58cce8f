/**
 * The container recipe without a Docker engine: the Dockerfile's facts (the Deno version CI
 * installs, a non-root user, the state volume, variables the service reads), its build context
 * against what it copies, and its start and health commands run for real on the files it copies;
 * compose.yaml's facts checked line by line (there is no YAML library here): pinned images, the
 * proxy's variables valid for the service, and the ports, addresses and secrets that must agree
 * between the services.
 */
import assert from "node:assert/strict";
import { envSchema, loadConfig } from "../../src/config/service_config.ts";
import {
  dockerEnv,
  dockerInstructions,
  envFile,
  type Instruction,
  yamlBlock,
  yamlPairs,
} from "./deploy_files.ts";
import { freePort, readDeployFile, SERVICE_ADDRESS } from "./front_proxy.ts";

const REPO = new URL("../../", import.meta.url);
const dockerfile = dockerInstructions(await readDeployFile("Dockerfile"));
const compose = await readDeployFile("compose.yaml");
const variables = new Set(Object.keys(envSchema.shape));

const only = (op: string) => dockerfile.filter((i) => i.op === op);
/** The exec-form (JSON array) command of an instruction, after any `--option`s. */
const execForm = (i: Instruction) => JSON.parse(i.args.slice(i.args.indexOf("["))) as string[];

Deno.test("Dockerfile: the Deno CI installs, a non-root user, DATA_DIR a volume, known variables", async () => {
  const ci = await Deno.readTextFile(new URL(".ci/run", REPO));
  const version = /^DENO_VERSION=(\S+)$/m.exec(ci)![1];
  assert.deepEqual(only("FROM").map((i) => i.args), [`denoland/deno:${version}`]);
  const user = only("USER").at(-1)?.args;
  assert.ok(user && user !== "root" && user !== "0", `runs as ${user}`);
  const env = dockerEnv(dockerfile);
  for (const name of Object.keys(env)) assert.ok(variables.has(name), `ENV ${name} is not read`);
  assert.deepEqual(only("VOLUME").map((i) => i.args), [env.DATA_DIR]);
  assert.deepEqual(only("EXPOSE").map((i) => i.args), [env.PORT]);
  assert.equal(loadConfig(env).HOST, "0.0.0.0", "reachable from outside its container");
});

Deno.test("Dockerfile: the build context admits exactly what it copies", async () => {
  const sources = only("COPY").flatMap((i) =>
    i.args.split(/\s+/).filter((w) => !w.startsWith("--")).slice(0, -1)
  );
  const ignore = (await readDeployFile("Dockerfile.dockerignore")).split("\n")
    .filter((l) => l && !l.startsWith("#"));
  assert.equal(ignore[0], "*", "everything is excluded first (data/ and .dev-data/ hold secrets)");
  assert.deepEqual(ignore.slice(1).map((l) => l.replace(/^!/, "")).sort(), [...sources].sort());
  for (const s of sources) await Deno.stat(new URL(s, REPO)); // each exists
});

/** Copies what the Dockerfile's COPY lines copy into `dir`, as the image's WORKDIR holds it. */
async function copyAsImage(dir: string): Promise<void> {
  for (const i of only("COPY")) {
    const words = i.args.split(/\s+/).filter((w) => !w.startsWith("--"));
    const dest = words.at(-1)!;
    for (const src of words.slice(0, -1)) {
      const to = dest.endsWith("/") && !src.endsWith("/")
        ? `${dir}/${dest}${src}`
        : `${dir}/${dest}`;
      await new Deno.Command("cp", { args: ["-r", new URL(src, REPO).pathname, to] }).output();
    }
  }
}

Deno.test("Dockerfile: CMD serves from the copied files alone; HEALTHCHECK tells up from down", async () => {
  const dir = await Deno.makeTempDir({ prefix: "lpp-image-" });
  await copyAsImage(dir);
  const port = freePort();
  const env: Record<string, string> = {
    ...dockerEnv(dockerfile),
    // this machine's Deno and its module cache stand in for the image's
    ...Object.fromEntries(
      ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"].flatMap((k) => {
        const v = Deno.env.get(k);
        return v === undefined ? [] : [[k, v]];
      }),
    ),
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: `${dir}/data`,
  };
  const run = (argv: string[], stdout: "null" | "piped" = "null") =>
    new Deno.Command(argv[0] === "deno" ? Deno.execPath() : argv[0], {
      args: argv.slice(1),
      cwd: dir,
      env,
      clearEnv: true,
      stdout,
      stderr: "null",
    });
  const cmd = execForm(only("CMD").at(-1)!);
  const health = execForm(only("HEALTHCHECK").at(-1)!);
  assert.ok(!/curl|wget/.test(health.join(" ")), "the image has neither curl nor wget");
  const healthy = async () => (await run(health).output()).code === 0;
  const service = run(cmd, "piped").spawn();
  const output = new Response(service.stdout).text();
  try {
    let up = false;
    for (let i = 0; i < 300 && !up; i++) {
      up = await fetch(`http://127.0.0.1:${port}/healthz`).then(async (r) => {
        await r.body?.cancel();
        return r.ok;
      }, () => false);
      if (!up) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(up, "the service answers /healthz");
    assert.equal(await healthy(), true, "HEALTHCHECK passes while it runs");
  } finally {
    service.kill("SIGTERM");
    assert.equal((await service.status).code, 0, `it stopped cleanly:\n${await output}`);
  }
  assert.equal(await healthy(), false, "HEALTHCHECK fails once it is gone");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compose.yaml: pinned images, proxy variables the service accepts, agreeing addresses", async () => {
  // every image and base image names a tag, never `latest`
  const images = [...compose.matchAll(/^\s*(?:image:|FROM)\s+(\S+)/gm)].map((m) => m[1]);
  assert.ok(images.length >= 5, `images found: ${images}`);
  for (const image of images) {
    assert.match(image, /^[\w./-]+:[\w.-]+$/, `${image} names a tag`);
    assert.doesNotMatch(image, /:latest$/, image);
  }

  const service = (name: string, key: string) => yamlBlock(compose, ["services", name, key]);
  const proxyEnv = yamlPairs(service("proxy", "environment"));
  for (const name of Object.keys(proxyEnv)) assert.ok(variables.has(name), `${name} is not read`);
  const image = dockerEnv(dockerfile);
  const example = envFile(await readDeployFile("compose.env.example"));
  // the values the service gets, `${VAR:?…}` standing for what the user sets: the example's
  // value where it gives one, else a secret
  const filled = Object.fromEntries(
    Object.entries({ ...image, ...proxyEnv }).map((
      [k, v],
    ) => [k, v.replace(/\$\{(\w+)[^}]*\}/, (_, name) => example[name] || "x".repeat(32))]),
  );
  const config = loadConfig(filled);

  // the proxy's published port, its volume, and the backends' addresses
  assert.deepEqual(service("proxy", "ports"), [`- "${SERVICE_ADDRESS}:${config.PORT}"`]);
  assert.deepEqual(service("proxy", "volumes"), [`- proxy-data:${config.DATA_DIR}`]);
  const parserEnv = yamlPairs(service("parser", "environment"));
  assert.equal(config.PARSER_URL, `http://parser:${parserEnv.PORT}`);
  assert.equal(parserEnv.BETTER_AUTH_URL, config.PARSER_URL, "the Parser trusts the proxy's calls");
  assert.equal(
    proxyEnv.PARSER_INTERNAL_SECRET,
    parserEnv.PORTAL_INTERNAL_SECRET,
    "one shared secret",
  );
  assert.equal(config.CORE_URL, "http://core:8080");
  assert.equal(parserEnv.ALLCODEX_URL, config.CORE_URL);
  assert.deepEqual(service("core", "ports"), ['- "127.0.0.1:8081:8080"']);
  assert.ok(config.TRUST_PROXY, "browsers come through the reverse proxy");
  // the name the reverse proxy snippets serve is the one the service answers to
  assert.equal(config.PUBLIC_ORIGIN, "https://lore.example.com");

  // compose.env.example names every setting compose.yaml requires, and no other
  const required = new Set([...compose.matchAll(/\$\{(\w+):\?/g)].map((m) => m[1]));
  assert.deepEqual(Object.keys(example).sort(), [...required].sort());
});

Deno.test("Dockerfile: CMD runs the service with `deno task start`'s flags; compile has its V8 flags", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(new URL("deno.json", REPO))).tasks;
  const startFlags = String(tasks.start).split(/\s+/).slice(2, -1);
  const cmd = execForm(only("CMD").at(-1)!);
  assert.deepEqual(
    cmd.filter((a) => a !== "--cached-only"),
    ["deno", "run", ...startFlags, "main.ts"],
  );
  for (const flag of startFlags.filter((f) => f.startsWith("--v8-flags="))) {
    assert.ok(String(tasks.compile).includes(flag), `compile lacks ${flag}`);
  }
});

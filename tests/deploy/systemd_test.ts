/**
 * The systemd unit, checked by systemd's own `systemd-analyze`: `verify` accepts it without a
 * single warning, and `security --offline` rates its sandbox at 2.0 or better. The one change for
 * the check: `ExecStart=` names a stand-in executable, since the compiled binary is not installed
 * here (verify refuses a missing one). Skipped with a console line where `systemd-analyze` is
 * missing (containers often lack systemd; CI does not install it).
 */
import assert from "node:assert/strict";
import { envSchema, loadConfig } from "../../src/config/service_config.ts";
import { envFile, unitEnvironmentNames } from "./deploy_files.ts";
import { readDeployFile, SERVICE_ADDRESS } from "./front_proxy.ts";

const ANALYZE = "/usr/bin/systemd-analyze";
const UNIT = "lore-portal-proxy.service";
const unit = await readDeployFile(UNIT);

function analyzeInstalled(): boolean {
  try {
    return Deno.statSync(ANALYZE).isFile;
  } catch {
    console.log(`systemd unit: skipped — ${ANALYZE} is missing (apt-get install systemd)`);
    return false;
  }
}

Deno.test("systemd unit: its variables and its env file are what the service reads", async () => {
  const variables = new Set(Object.keys(envSchema.shape));
  const env = envFile(await readDeployFile("lore-portal-proxy.env"));
  for (const name of [...unitEnvironmentNames(unit), ...Object.keys(env)]) {
    assert.ok(variables.has(name), `${name} is not a variable the service reads`);
  }
  const config = loadConfig(env);
  assert.ok(config.TRUST_PROXY, "the example is a valid configuration, behind a proxy");
  // the name the reverse proxy snippets serve is the one the service answers to
  assert.equal(config.PUBLIC_ORIGIN, "https://lore.example.com");
  assert.equal(
    `${env.HOST}:${env.PORT}`,
    SERVICE_ADDRESS,
    "where the proxy snippets send requests",
  );
  assert.match(unit, /^ExecStart=\/usr\/local\/bin\/lore-portal-proxy$/m);
  assert.match(unit, /^EnvironmentFile=\/etc\/lore-portal-proxy\/env$/m);
  // exit status 2 is the service's answer to invalid configuration
  assert.match(unit, /^RestartPreventExitStatus=2$/m);
});

Deno.test({
  name: "systemd unit: systemd-analyze verifies it without a warning; its sandbox rates ≤ 2.0",
  ignore: !analyzeInstalled(),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "lpp-systemd-" });
    try {
      const stub = `${dir}/lore-portal-proxy`;
      await Deno.writeTextFile(stub, "#!/bin/sh\n", { mode: 0o755 });
      const changed = unit.replace(/^ExecStart=\S+/m, `ExecStart=${stub}`);
      assert.notEqual(changed, unit);
      await Deno.writeTextFile(`${dir}/${UNIT}`, changed);
      const analyze = async (...args: string[]) => {
        const out = await new Deno.Command(ANALYZE, { args, cwd: dir, env: { SYSTEMD_PAGER: "" } })
          .output();
        return { code: out.code, stderr: new TextDecoder().decode(out.stderr).trim() };
      };
      assert.deepEqual(await analyze("verify", `./${UNIT}`), { code: 0, stderr: "" });
      const security = await analyze("security", "--offline=yes", "--threshold=20", `./${UNIT}`);
      assert.equal(security.code, 0, security.stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/**
 * The CLI over TLS: client commands read RUNLATER_TLS_CA (and a client certificate) like
 * every SDK; `runlater serve --tls-cert/--tls-key` in a real process serves https and
 * reloads its certificate on SIGHUP.
 */
import { spawn } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as tls from "node:tls";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../src/server.js";
import { MemoryStore } from "../src/store/memory/memory-store.js";
import { runIn } from "./cli-harness.js";
import { makeCerts } from "./http/test-certs.js";

const certs = makeCerts("a", "b");
const { a, b } = certs;
afterAll(() => certs.remove());

describe("client commands against an mTLS server", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      store: new MemoryStore(),
      port: 0,
      host: "127.0.0.1",
      tls: { certFile: a.cert, keyFile: a.key, clientCaFile: a.ca },
    });
  });
  afterAll(() => server.stop());

  it("works with the CA and client certificate from the environment", async () => {
    const env = {
      RUNLATER_URL: server.url,
      RUNLATER_TLS_CA: a.ca,
      RUNLATER_TLS_CERT: a.clientCert,
      RUNLATER_TLS_KEY: a.clientKey,
    };
    expect((await runIn(["queue", "create", "over_tls"], env)).stdout).toMatch(/^created queue over_tls\n/);
  });

  it("fails with the reason, exit 1, without the CA; and names a missing file", async () => {
    const untrusted = await runIn(["queue", "list"], { RUNLATER_URL: server.url });
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/certificate/);
    const missing = await runIn(["queue", "list"], {
      RUNLATER_URL: server.url,
      RUNLATER_TLS_CA: "/nonexistent/ca.pem",
    });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("/nonexistent/ca.pem");
  });
});

/** Whether a new TLS connection to `url` shows a certificate that chains to `ca` (a fresh socket: no pooled connection). */
function verifiedBy(url: string, ca: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: hostname, port: Number(port), ca: readFileSync(ca), rejectUnauthorized: false },
      () => {
        resolve(socket.authorized);
        socket.destroy();
      },
    );
    socket.on("error", reject);
  });
}

const RUNLATER = fileURLToPath(new URL("../../scripts/runlater", import.meta.url));

describe("runlater serve --tls-cert --tls-key", () => {
  it("serves https, and on SIGHUP serves the renewed certificate to new connections", async () => {
    const live = { cert: join(certs.dir, "live.pem"), key: join(certs.dir, "live-key.pem") };
    copyFileSync(a.cert, live.cert);
    copyFileSync(a.key, live.key);
    const child = spawn(
      RUNLATER,
      ["serve", "--store", "memory", "--port", "0", "--tls-cert", live.cert, "--tls-key", live.key, "--log-level", "info"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const waitFor = (what: () => boolean, label: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (what()) return resolve();
          if (child.exitCode !== null) return reject(new Error(`serve exited while waiting for ${label}: ${stderr}`));
          setTimeout(check, 20);
        };
        check();
      });
    try {
      await waitFor(() => /listening on https:\/\//.test(stdout), "the listening line");
      const url = /listening on (\S+)/.exec(stdout)![1]!;
      expect((await runIn(["queue", "list"], { RUNLATER_URL: url, RUNLATER_TLS_CA: a.ca })).code).toBe(0);
      expect(await verifiedBy(url, a.ca)).toBe(true);
      copyFileSync(b.cert, live.cert);
      copyFileSync(b.key, live.key);
      child.kill("SIGHUP");
      await waitFor(() => stderr.includes("TLS certificate reloaded"), "the reload");
      expect((await runIn(["queue", "list"], { RUNLATER_URL: url, RUNLATER_TLS_CA: b.ca })).code).toBe(0);
      expect(await verifiedBy(url, a.ca)).toBe(false);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("close", resolve));
    }
  });

  it("refuses a certificate without its key, and a client CA without TLS (exit 2)", async () => {
    for (const args of [
      ["--tls-cert", a.cert],
      ["--tls-client-ca", a.ca],
    ]) {
      const res = await runIn(["serve", "--store", "memory", "--port", "0", ...args], {});
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/--tls-cert and --tls-key go together|need TLS/);
    }
  });
});

/** Throwaway certificate chains from scripts/test-certs.sh (the one the Python and Java tests use too). */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCerts {
  /** The CA a client trusts. */
  ca: string;
  /** The server's certificate and key (127.0.0.1, ::1, localhost). */
  cert: string;
  key: string;
  /** A client certificate from the same CA, for mTLS. */
  clientCert: string;
  clientKey: string;
}

/** A temporary directory with `chains` independent chains in it; remove() deletes it. */
export function makeCerts<K extends string>(...chains: K[]): { dir: string; remove(): void } & Record<K, TestCerts> {
  const dir = mkdtempSync(join(tmpdir(), "runlater-tls-"));
  const script = new URL("../../../scripts/test-certs.sh", import.meta.url).pathname;
  const made = {} as Record<K, TestCerts>;
  for (const name of chains) {
    const chainDir = join(dir, name);
    execFileSync("bash", [script, chainDir]);
    const file = (f: string) => join(chainDir, f);
    made[name] = {
      ca: file("ca.pem"),
      cert: file("server.pem"),
      key: file("server-key.pem"),
      clientCert: file("client.pem"),
      clientKey: file("client-key.pem"),
    };
  }
  return { ...made, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

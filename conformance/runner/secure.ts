/**
 * The secure run (`--secure`): every server the runner starts has auth on (a random
 * bootstrap admin token), a random cluster secret and TLS with throwaway certificates
 * (scripts/test-certs.sh), and every driver is told the token and the CA to trust, so the
 * whole matrix also runs as production would be set up (docs/security.md).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Interceptor } from "@connectrpc/connect";
import { CLUSTER_SECRET_HEADER } from "../../server/src/wire/forwarding.js";

export interface Security {
  /** The bootstrap admin token every client and worker sends. */
  adminToken: string;
  /** What the runner sends test control: a node service, closed to client tokens. */
  clusterSecret: string;
  /** The CA the drivers and the runner trust. */
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** A token in the server's format, `rl_<12 hex>_<43 base64url>` (server/src/domain/tokens.ts). */
export function randomAdminToken(): string {
  return `rl_${randomBytes(6).toString("hex")}_${randomBytes(32).toString("base64url")}`;
}

/** Makes the certificates in `dir` and a new token and cluster secret. */
export function makeSecurity(root: string, dir: string): Security {
  execFileSync("bash", [join(root, "scripts/test-certs.sh"), dir], { stdio: ["ignore", "ignore", "inherit"] });
  return {
    adminToken: randomAdminToken(),
    clusterSecret: randomBytes(24).toString("base64url"),
    caFile: join(dir, "ca.pem"),
    certFile: join(dir, "server.pem"),
    keyFile: join(dir, "server-key.pem"),
  };
}

/** What `runlater serve` is started with: TLS flags, and auth and the cluster secret by environment. */
export function serverSettings(s: Security | undefined): { args: string[]; env: NodeJS.ProcessEnv } {
  if (!s) return { args: [], env: {} };
  return {
    args: ["--tls-cert", s.certFile, "--tls-key", s.keyFile],
    env: { RUNLATER_ADMIN_TOKEN: s.adminToken, RUNLATER_CLUSTER_SECRET: s.clusterSecret },
  };
}

/** Options of the runner's test-control transport: trust the test CA, send the cluster secret. */
export function controlTransportOptions(s: Security | undefined): {
  nodeOptions?: { ca: Buffer };
  interceptors?: Interceptor[];
} {
  if (!s) return {};
  const sendSecret: Interceptor = (next) => (req) => {
    req.header.set(CLUSTER_SECRET_HEADER, s.clusterSecret);
    return next(req);
  };
  return { nodeOptions: { ca: readFileSync(s.caFile) }, interceptors: [sendSecret] };
}

/** The `connect` request's credentials for the drivers. */
export function driverCredentials(s: Security | undefined): { token?: string; tls_ca?: string } {
  return s ? { token: s.adminToken, tls_ca: s.caFile } : {};
}

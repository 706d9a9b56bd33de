/**
 * TLS options of a client (docs/security.md#tls): which CA to trust, and the client
 * certificate for servers that require one (mTLS). Given as file paths, like the
 * environment variables every runlater client reads (RUNLATER_TLS_CA, RUNLATER_TLS_CERT,
 * RUNLATER_TLS_KEY), so a renewed file is picked up by the next process without code.
 */
import { readFileSync } from "node:fs";

export interface TlsOptions {
  /** PEM file of the CA(s) to trust instead of Node's bundled ones; default $RUNLATER_TLS_CA. */
  caFile?: string;
  /** PEM client certificate (chain) for a server that requires one; default $RUNLATER_TLS_CERT. */
  certFile?: string;
  /** PEM private key of certFile; default $RUNLATER_TLS_KEY. */
  keyFile?: string;
}

/** What Node's TLS clients (https, http2) take. */
export interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/**
 * Reads the files the options (else the environment) name. A file that cannot be read,
 * or a certificate without its key, is an error naming it, here rather than at the
 * first call.
 */
export function readTls(o: TlsOptions = {}, env: NodeJS.ProcessEnv = process.env): TlsMaterial {
  const pick = (value: string | undefined, variable: string) => value ?? (env[variable]?.trim() || undefined);
  const caFile = pick(o.caFile, "RUNLATER_TLS_CA");
  const certFile = pick(o.certFile, "RUNLATER_TLS_CERT");
  const keyFile = pick(o.keyFile, "RUNLATER_TLS_KEY");
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new Error(
      "a TLS client certificate needs its key: give both certFile and keyFile (or RUNLATER_TLS_CERT and RUNLATER_TLS_KEY)",
    );
  const material: TlsMaterial = {};
  if (caFile !== undefined) material.ca = readPem("CA", caFile);
  if (certFile !== undefined && keyFile !== undefined) {
    material.cert = readPem("client certificate", certFile);
    material.key = readPem("client key", keyFile);
  }
  return material;
}

function readPem(what: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`cannot read the TLS ${what} file ${path}: ${(err as Error).message}`);
  }
}

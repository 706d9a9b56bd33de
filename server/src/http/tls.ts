/**
 * TLS material for the one port (docs/security.md#tls): the certificate chain and key the
 * server presents, and optionally the CA that client certificates must chain to (mTLS).
 * Read from files so an operator can replace them and reload (SIGHUP) without a restart.
 */
import { readFileSync } from "node:fs";
import * as tls from "node:tls";

export interface TlsFiles {
  /** PEM certificate chain the server presents (leaf first). */
  certFile: string;
  /** PEM private key of that certificate. */
  keyFile: string;
  /** PEM CA bundle: when set, every client must present a certificate that chains to it. */
  clientCaFile?: string;
}

/** What the listener needs: secure-context options, and whether clients must present certificates. */
export interface TlsMaterial {
  context: tls.SecureContextOptions;
  requireClientCert: boolean;
}

/**
 * Reads the files and checks that they make a usable context (a key that matches the
 * certificate, PEM that parses), so a bad file is refused at start or reload with its
 * name instead of failing every handshake later.
 */
export function readTlsFiles(files: TlsFiles): TlsMaterial {
  const read = (what: string, path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`cannot read the TLS ${what} ${path}: ${(err as Error).message}`);
    }
  };
  const context: tls.SecureContextOptions = {
    cert: read("certificate", files.certFile),
    key: read("key", files.keyFile),
    ...(files.clientCaFile === undefined ? {} : { ca: read("client CA", files.clientCaFile) }),
  };
  try {
    tls.createSecureContext(context);
  } catch (err) {
    const names = [files.certFile, files.keyFile, files.clientCaFile].filter((f) => f !== undefined).join(", ");
    throw new Error(`the TLS files ${names} do not make a usable certificate and key: ${(err as Error).message}`);
  }
  return { context, requireClientCert: files.clientCaFile !== undefined };
}

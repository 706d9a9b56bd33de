/**
 * The web dashboard's static files at /ui (docs/dashboard.md). The dashboard is a browser
 * app that talks Connect to the public services on this same port, like every SDK: this
 * module only serves its built files (server/ui/dist, `npm run build:ui`), read into memory
 * once at start, with a gzipped copy of each. Nothing else is served here: no private
 * backend route, no directory listing, no path ever read from disk at request time.
 *
 *   GET /            → 302 /ui/
 *   GET /ui          → 308 /ui/
 *   GET /ui/         → index.html
 *   GET /ui/<file>   → that file of the build, or 404
 *
 * When the build is missing, /ui answers 503 saying how to build it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import type * as http from "node:http";
import type * as http2 from "node:http2";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { RequestHandler } from "./listener.js";

/** Where `npm run build:ui` writes the dashboard. */
export const DEFAULT_UI_DIR = fileURLToPath(new URL("../../ui/dist", import.meta.url));

/** Largest build this module loads (every file in memory): the dashboard is ~180 KiB. */
const MAX_TOTAL_BYTES = 8 * 1024 * 1024;

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".map": "application/json",
};

/**
 * Only the dashboard's own files may run or load: scripts, styles and calls go to this
 * origin and nowhere else (nothing from a CDN), and no other site may frame it.
 */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface Asset {
  type: string;
  raw: Buffer;
  gzip: Buffer;
  /** Hashed names never change content; index.html must be re-read on each visit. */
  immutable: boolean;
}

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

/** Reads the build in `dir` (flat, as server/ui/build.mjs writes it); undefined when there is none. */
export function loadUiAssets(dir: string): Map<string, Asset> | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  if (!names.includes("index.html")) return undefined;
  const assets = new Map<string, Asset>();
  let total = 0;
  for (const name of names) {
    const path = join(dir, name);
    const type = TYPES[extname(name)];
    if (!type || !statSync(path).isFile()) continue;
    const raw = readFileSync(path);
    total += raw.length;
    if (total > MAX_TOTAL_BYTES)
      throw new Error(`${dir} holds more than ${MAX_TOTAL_BYTES} bytes: not a dashboard build`);
    assets.set(name, { type, raw, gzip: gzipSync(raw), immutable: /-[A-Z0-9]{8}\.\w+$/.test(name) });
  }
  return assets;
}

/**
 * Wraps `next` so that GET/HEAD of / and /ui… are answered from the build in `dir`; every
 * other request (Connect, gRPC, /metrics) goes on to `next` untouched.
 */
export function withStaticUi(next: RequestHandler, dir = DEFAULT_UI_DIR): RequestHandler {
  const assets = loadUiAssets(dir);
  return (req, res) => {
    const method = req.method;
    const url = req.url ?? "";
    if ((method !== "GET" && method !== "HEAD") || !(url === "/" || url === "/ui" || url.startsWith("/ui/"))) {
      return next(req, res);
    }
    const path = url.split(/[?#]/, 1)[0]!;
    if (path === "/") return redirect(res, 302, "/ui/");
    if (path === "/ui") return redirect(res, 308, "/ui/");
    if (!assets) {
      return text(res, 503, "The dashboard is not built: run `npm run build:ui` (docs/dashboard.md), then restart.\n");
    }
    const name = path === "/ui/" ? "index.html" : path.slice("/ui/".length);
    const asset = assets.get(name);
    if (!asset) return text(res, 404, "not found\n");
    send(req, res, asset);
  };
}

function send(req: Req, res: Res, asset: Asset): void {
  const gzip = /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
  const body = gzip ? asset.gzip : asset.raw;
  res.statusCode = 200;
  res.setHeader("content-type", asset.type);
  res.setHeader("content-length", body.length);
  res.setHeader("vary", "accept-encoding");
  if (gzip) res.setHeader("content-encoding", "gzip");
  res.setHeader("cache-control", asset.immutable ? "public, max-age=31536000, immutable" : "no-cache");
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "no-referrer");
  if (asset.type.startsWith("text/html")) res.setHeader("content-security-policy", CSP);
  if (req.method === "HEAD") res.end();
  else res.end(body);
}

function redirect(res: Res, status: number, location: string): void {
  res.statusCode = status;
  res.setHeader("location", location);
  res.setHeader("content-length", 0);
  res.end();
}

function text(res: Res, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader("content-type", "text/plain; charset=utf-8");
  res.setHeader("content-length", Buffer.byteLength(body));
  res.end(body);
}

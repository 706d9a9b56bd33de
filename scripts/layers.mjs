#!/usr/bin/env node
/**
 * The import rules of the repository, in one place: which server layer may import which,
 * and what the packages around the server may not import. From this table the script
 * writes Biome overrides (noRestrictedImports, one override per
 * folder) into scripts/biome-layers.json (which biome.jsonc extends) and the layer table
 * of docs/architecture.md (between the layers markers).
 * CI runs it and fails if either file changed (the same drift check as generated code).
 *
 *   node scripts/layers.mjs          rewrite scripts/biome-layers.json and docs/architecture.md
 *   node scripts/layers.mjs --check  exit 1 if either is out of date
 *
 * Biome matches import specifiers, not resolved paths; that is enough here because every
 * layer is a folder whose name no other folder uses, so a specifier that reaches into a
 * layer names it ("../../engine/engine.js", "../store/store.js").
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** server/src, bottom to top. `imports` lists every layer a layer may import; anything else is forbidden. */
export const layers = [
  {
    name: "gen",
    path: "gen/",
    job: "generated code of the internal protos (runlater.cluster.v1, runlater.testing.v1): never edited",
    imports: [],
  },
  {
    name: "domain",
    path: "domain/",
    job: "the job model (job-record), the state machine (transitions), queue config, retry policy, ids, errors, limits, the clock, job filters, ordering keys: pure rules, no I/O",
    imports: [],
  },
  {
    name: "store",
    path: "store/",
    job: "the Store interface (store.ts) and its implementations (memory/, sqlite/, redis/, mysql/), shard routing and placement shared by the sharded stores",
    imports: ["domain"],
  },
  {
    name: "broker",
    path: "broker/",
    job: "partition leases, prefetch buffers, long-poll waiters, rate limits (Pacer's broker)",
    imports: ["store", "domain"],
  },
  {
    name: "engine",
    path: "engine/",
    job: "validates requests, fills defaults, drives the store and the broker (through the Dispatch seam), counts job movements",
    imports: ["broker", "store", "domain"],
  },
  {
    name: "maintenance",
    path: "maintenance/",
    job: "the claim-timeout sweep, retention GC, schedule firing and workflow upkeep (the reconciler, instance retention), on the leader",
    imports: ["engine", "store", "domain"],
  },
  {
    name: "auth",
    path: "auth/",
    job: "API tokens: what each method needs (scope, queues), checking a call's token, making and revoking tokens",
    imports: ["store", "domain"],
  },
  {
    name: "wire",
    path: "wire/",
    job: "proto ↔ domain conversions and headers shared by the API and calls between nodes",
    imports: ["domain", "gen"],
  },
  {
    name: "cluster",
    path: "cluster/",
    job: "broker registry view, rendezvous assignment, Dequeue forwarding and notifications between nodes, peer connections",
    imports: ["broker", "engine", "store", "domain", "wire", "gen"],
  },
  {
    name: "api",
    path: "api/",
    job: "Connect handlers: parse a request, call the engine, map the answer; the error and stream plumbing",
    imports: ["cluster", "maintenance", "engine", "auth", "domain", "wire", "gen"],
  },
  {
    name: "http",
    path: "http/",
    job: "one port for HTTP/1.1 and h2c; the web dashboard's built files at /ui (static-ui.ts)",
    imports: [],
  },
  {
    name: "root",
    path: "*.ts",
    job: "server.ts (wires every layer into a running node), metrics.ts (Prometheus), log.ts (pino)",
    imports: ["api", "http", "cluster", "maintenance", "engine", "auth", "broker", "store", "domain", "wire", "gen"],
    modules: ["server", "metrics", "log"],
  },
  {
    name: "cli",
    path: "cli/",
    job: "the runlater command (commander)",
    imports: [
      "root",
      "api",
      "http",
      "cluster",
      "maintenance",
      "engine",
      "auth",
      "broker",
      "store",
      "domain",
      "wire",
      "gen",
    ],
  },
];

/** Rules for the packages around the server: where they are, and what they must not import, with why. */
export const packages = [
  {
    includes: ["sdk-ts/src/**"],
    forbid: ["**/server/**", "**/conformance/**", "**/test/**"],
    why: "the SDK stands alone: it never imports the server, the conformance suite or tests",
  },
  {
    includes: ["sdk-ts/conformance/**"],
    forbid: ["**/runner/**", "**/server/**"],
    why: "a driver speaks the driver protocol (conformance/protocol.ts) through the SDK's public API, nothing of the runner or server",
  },
  {
    includes: ["server/ui/src/**"],
    forbid: [
      "@runlater/sdk",
      "!@runlater/sdk/gen/*",
      "@connectrpc/connect-node",
      "node:*",
      "**/src/**",
      "**/server/**",
      "**/sdk-ts/**",
      "**/test/**",
    ],
    why: "the dashboard is a browser client of the public API: it imports the SDK's generated runlater.v1 code and connect-web, never server code, the SDK's Node client or Node modules",
  },
  {
    includes: ["conformance/**"],
    forbid: ["@runlater/sdk", "@runlater/sdk/**", "**/sdk-ts/**"],
    why: "the runner drives SDKs as processes; it imports none of them",
  },
];

/** What every server layer must not import, besides other layers (folded into each layer's rule: Biome applies one rule config per file). */
const serverForbids = {
  group: ["@runlater/sdk/**", "!@runlater/sdk/gen/*", "**/sdk-ts/**", "**/test/**", "**/conformance/**"],
  message:
    "the server uses the SDK's public exports only (@runlater/sdk and its generated runlater.v1 code), never tests",
};

const byName = new Map(layers.map((l) => [l.name, l]));

/** Specifier patterns that reach into layer `name`. */
function reaching(name) {
  const layer = byName.get(name);
  if (layer.modules) return layer.modules.flatMap((m) => [`**/${m}.js`, `./${m}.js`]);
  const dir = layer.path.replace(/\/$/, "");
  // "./api/x.js" (from server/src/*.ts) needs its own pattern: "**/" does not match ".".
  return [`**/${dir}`, `**/${dir}/**`, `./${dir}/**`];
}

function restricted(...patterns) {
  return { style: { noRestrictedImports: { level: "error", options: { patterns } } } };
}

function overrides() {
  const layerRules = layers.map((layer) => {
    const forbidden = layers.filter((other) => other !== layer && !layer.imports.includes(other.name));
    const allowed = layer.imports.length === 0 ? "nothing of the server" : layer.imports.join(", ");
    const includes = [`server/src/${layer.modules ? "*.ts" : `${layer.path}**`}`];
    return {
      includes,
      linter: {
        rules: restricted(
          {
            group: forbidden.flatMap((l) => reaching(l.name)),
            message: `server/src/${layer.path} (${layer.name}) may import ${allowed} (docs/architecture.md, scripts/layers.mjs)`,
          },
          serverForbids,
        ),
      },
    };
  });
  const packageRules = packages.map((p) => ({
    includes: p.includes,
    linter: { rules: restricted({ group: p.forbid, message: p.why }) },
  }));
  return [...packageRules, ...layerRules];
}

function table() {
  const rows = layers.map((l) => {
    const where = l.modules ? l.modules.map((m) => `\`${m}.ts\``).join(", ") : `\`${l.path}\``;
    return `| ${where} | ${l.job} | ${l.imports.length === 0 ? "—" : l.imports.join(", ")} |`;
  });
  return ["| layer | job | may import |", "|---|---|---|", ...rows.reverse()].join("\n");
}

const START = "<!-- layers:start (generated by scripts/layers.mjs: edit the table there) -->";
const END = "<!-- layers:end -->";

function withTable(doc) {
  const i = doc.indexOf(START);
  const j = doc.indexOf(END);
  if (i < 0 || j < 0) throw new Error(`docs/architecture.md has no ${START} … ${END} block`);
  return `${doc.slice(0, i + START.length)}\n${table()}\n${doc.slice(j)}`;
}

/** The generated Biome config, formatted as Biome formats it (so formatting never makes it stale). */
function layersConfig() {
  const json = JSON.stringify({ overrides: overrides() });
  const biome = join(root, "node_modules/.bin/biome");
  return execFileSync(biome, ["format", "--stdin-file-path", "scripts/biome-layers.json"], {
    cwd: root,
    input: json,
    encoding: "utf8",
  });
}

const files = [
  { path: join(root, "scripts/biome-layers.json"), update: () => layersConfig() },
  { path: join(root, "docs/architecture.md"), update: withTable },
];

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes("--check");
  let stale = false;
  for (const f of files) {
    const before = readFileSync(f.path, "utf8");
    const after = f.update(before);
    if (before === after) continue;
    stale = true;
    if (check) console.error(`${f.path} is out of date: run node scripts/layers.mjs`);
    else writeFileSync(f.path, after);
  }
  process.exit(check && stale ? 1 : 0);
}

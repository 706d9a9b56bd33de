/**
 * The import boundaries really hold: for every server layer, an import of each other layer
 * is refused by Biome unless scripts/layers.mjs allows it, and allowed ones pass. Probes
 * are written into a scratch copy of the lint config, never into the tree.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ESM script without type declarations
import { layers, packages } from "../../scripts/layers.mjs";

interface Layer {
  name: string;
  path: string;
  imports: string[];
  modules?: string[];
}

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const scratch = mkdtempSync(join(tmpdir(), "runlater-layers-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Where a probe of `from` lives, and the specifier it uses to reach layer `to`. */
function probe(from: Layer, to: Layer): { file: string; specifier: string } {
  const dir = from.modules ? "server/src" : `server/src/${from.path.replace(/\/$/, "")}`;
  const file = join(dir, `probe-${to.name}.ts`);
  const up = from.modules ? "./" : "../";
  const specifier = to.modules ? `${up}${to.modules[0]}.js` : `${up}${to.path}x.js`;
  return { file, specifier };
}

/** Lints the probes in the scratch tree; returns the probe files Biome refused. */
function refused(files: Array<{ file: string; source: string }>): Set<string> {
  rmSync(join(scratch, "server"), { recursive: true, force: true });
  rmSync(join(scratch, "sdk-ts"), { recursive: true, force: true });
  rmSync(join(scratch, "conformance"), { recursive: true, force: true });
  cpSync(join(root, "biome.jsonc"), join(scratch, "biome.jsonc"));
  mkdirSync(join(scratch, "scripts"), { recursive: true });
  cpSync(join(root, "scripts/biome-layers.json"), join(scratch, "scripts/biome-layers.json"));
  for (const f of files) {
    mkdirSync(dirname(join(scratch, f.file)), { recursive: true });
    writeFileSync(join(scratch, f.file), f.source);
  }
  let output: string;
  try {
    output = execFileSync(
      join(root, "node_modules/.bin/biome"),
      ["lint", "--vcs-enabled=false", "--only=style/noRestrictedImports", "--max-diagnostics=none", "."],
      {
        cwd: scratch,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
  } catch (err) {
    output = `${(err as { stdout: string }).stdout}${(err as { stderr: string }).stderr}`;
  }
  return new Set([...output.matchAll(/^(\S+\.ts):\d+:\d+ lint\/style\/noRestrictedImports/gm)].map((m) => m[1]!));
}

describe("import boundaries (scripts/layers.mjs → Biome)", () => {
  it("refuses every import of a layer the table does not allow, and lets the allowed ones through", () => {
    const all = layers as Layer[];
    // Generated code (gen/) is not linted: protoc-gen-es writes it, CI checks it for drift.
    const files = all
      .filter((from) => from.name !== "gen")
      .flatMap((from) => all.filter((to) => to !== from).map((to) => ({ from, to, ...probe(from, to) })));
    const bad = refused(
      files.map((f) => ({ file: f.file, source: `import { x } from "${f.specifier}";\nexport const y = x;\n` })),
    );
    const wrong = files.filter((f) => bad.has(f.file) === f.from.imports.includes(f.to.name));
    expect(wrong.map((f) => `${f.from.name} → ${f.to.name}: ${bad.has(f.file) ? "refused" : "allowed"}`)).toEqual([]);
    expect(bad.size).toBeGreaterThan(50); // most pairs are forbidden: the probes did reach the linter
  });

  it("keeps the server to the SDK's public exports, the SDK and the conformance runner to themselves, and the dashboard to the public API", () => {
    const cases = [
      { file: "server/src/engine/a.ts", specifier: "@runlater/sdk/async-queue.js", refused: true },
      { file: "server/src/api/b.ts", specifier: "@runlater/sdk/gen/job_pb.js", refused: false },
      { file: "server/src/api/c.ts", specifier: "@runlater/sdk", refused: false },
      { file: "server/src/store/d.ts", specifier: "../../test/storetest/index.js", refused: true },
      { file: "sdk-ts/src/e.ts", specifier: "../../server/src/domain/limits.js", refused: true },
      { file: "sdk-ts/conformance/f.ts", specifier: "../../conformance/runner/main.js", refused: true },
      { file: "sdk-ts/conformance/g.ts", specifier: "../../conformance/protocol.js", refused: false },
      { file: "conformance/runner/h.ts", specifier: "@runlater/sdk", refused: true },
      // The dashboard: a browser client of the public API only.
      { file: "server/ui/src/i.ts", specifier: "@runlater/sdk/gen/job_pb.js", refused: false },
      { file: "server/ui/src/j.ts", specifier: "@connectrpc/connect-web", refused: false },
      { file: "server/ui/src/pages/k.ts", specifier: "../api.js", refused: false },
      { file: "server/ui/src/l.ts", specifier: "@runlater/sdk", refused: true },
      { file: "server/ui/src/m.ts", specifier: "../../src/engine/engine.js", refused: true },
      { file: "server/ui/src/pages/n.ts", specifier: "../../../../sdk-ts/src/client.js", refused: true },
      { file: "server/ui/src/o.ts", specifier: "@connectrpc/connect-node", refused: true },
      { file: "server/ui/src/p.ts", specifier: "node:fs", refused: true },
    ];
    const bad = refused(
      cases.map((c) => ({ file: c.file, source: `import { x } from "${c.specifier}";\nexport const y = x;\n` })),
    );
    expect(cases.map((c) => `${c.file} ${c.specifier}: ${bad.has(c.file) ? "refused" : "allowed"}`)).toEqual(
      cases.map((c) => `${c.file} ${c.specifier}: ${c.refused ? "refused" : "allowed"}`),
    );
    expect((packages as unknown[]).length).toBeGreaterThan(0);
  });
});

/**
 * conformance/known-failing/<sdk>.txt: cases expected to fail, one pattern a line with
 * its reason: `<store>/<protocol>/<scenario>  # why`. `*` matches any run of characters
 * except `/`. Listed cases still run; a listed case that passes fails the run, so the
 * list cannot go stale (as in connectrpc/conformance).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface KnownFailing {
  pattern: string;
  reason: string;
  regex: RegExp;
}

export function loadKnownFailing(dir: string, sdk: string): KnownFailing[] {
  const file = join(dir, `${sdk}.txt`);
  if (!existsSync(file)) return [];
  const out: KnownFailing[] = [];
  for (const [i, raw] of readFileSync(file, "utf8").split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const hash = line.indexOf("#");
    const pattern = (hash < 0 ? line : line.slice(0, hash)).trim();
    const reason = hash < 0 ? "" : line.slice(hash + 1).trim();
    if (reason === "") throw new Error(`${file}:${i + 1}: give a reason after "#": ${line}`);
    if (pattern.split("/").length !== 3)
      throw new Error(`${file}:${i + 1}: the pattern must be <store>/<protocol>/<scenario>: ${pattern}`);
    const regex = new RegExp(
      `^${pattern
        .split("*")
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]*")}$`,
    );
    out.push({ pattern, reason, regex });
  }
  return out;
}

export function findKnownFailing(list: KnownFailing[], caseName: string): KnownFailing | undefined {
  return list.find((k) => k.regex.test(caseName));
}

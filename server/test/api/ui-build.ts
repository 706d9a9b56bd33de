import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A build as server/ui/build.mjs writes it: index.html and hashed assets, flat (plus a file of a type never served). */
export function fakeBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), "runlater-ui-"));
  writeFileSync(join(dir, "index.html"), '<!doctype html><script src="main-ABCDEF23.js"></script>');
  writeFileSync(join(dir, "main-ABCDEF23.js"), `console.log(${JSON.stringify("x".repeat(2000))});`);
  writeFileSync(join(dir, "notes.txt"), "not a type the dashboard serves");
  return dir;
}

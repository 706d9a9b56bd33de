/**
 * A Python venv with the SDK installed from this checkout (editable), made once and kept
 * under .tools/ until sdk-python/pyproject.toml changes (the stamp file holds the copy it
 * was made from), like conformance/run.sh's. For the benches and the tests that run the
 * Python Worker next to the TypeScript one. Needs python3 (>= 3.10) and PyPI the first time.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");

/** The venv's python, after making or refreshing `.tools/<name>`. */
export function pythonWithSdk(name: string, log: (line: string) => void = () => {}): string {
  const venv = join(root, ".tools", name);
  const python = join(venv, "bin/python");
  const stamp = join(venv, ".sdk-pyproject");
  const pyproject = readFileSync(join(root, "sdk-python/pyproject.toml"), "utf8");
  if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== pyproject) {
    log(`installing the Python SDK into ${venv}`);
    rmSync(venv, { recursive: true, force: true });
    execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
    execFileSync(
      python,
      ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", join(root, "sdk-python")],
      {
        stdio: "inherit",
      },
    );
    writeFileSync(stamp, pyproject);
  }
  return python;
}

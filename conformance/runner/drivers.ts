/**
 * The SDK drivers the runner knows: how to start each and which wire protocols its SDK
 * offers. A new language adds an entry here (see conformance/README.md).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { WireProtocol } from "../protocol.js";

export interface DriverSpec {
  sdk: string;
  protocols: WireProtocol[];
  /** argv to start the driver, from the repo root; throws if it is not built. */
  command(root: string): string[];
  /** How long the first answer may take (a JVM starting). */
  startupTimeoutMs: number;
}

export const drivers: DriverSpec[] = [
  {
    sdk: "ts",
    protocols: ["connect-json", "connect-binary", "grpc", "grpc-web"],
    // The SDK's sources, not its build: the "@runlater/source" export condition.
    command: (root) => [
      process.execPath,
      join(root, "node_modules/tsx/dist/cli.mjs"),
      "--conditions=@runlater/source",
      join(root, "sdk-ts/conformance/driver.ts"),
    ],
    startupTimeoutMs: 30_000,
  },
  {
    sdk: "python",
    // The Python SDK's Connect transport sends binary protobuf (no JSON option).
    protocols: ["connect-binary", "grpc", "grpc-web"],
    command: (root) => {
      const python = process.env.RUNLATER_CONFORMANCE_PYTHON ?? join(root, ".tools/conformance-venv/bin/python");
      if (!existsSync(python))
        throw new Error(
          `no Python with the SDK at ${python}: run conformance/run.sh, or set RUNLATER_CONFORMANCE_PYTHON`,
        );
      return [python, join(root, "sdk-python/conformance/driver.py")];
    },
    startupTimeoutMs: 30_000,
  },
  {
    sdk: "java",
    protocols: ["grpc"],
    command: (root) => {
      const cpFile = join(root, "sdk-java/target/conformance-classpath.txt");
      if (!existsSync(cpFile))
        throw new Error(`${cpFile} is missing: run conformance/run.sh (it builds the Java driver with Maven)`);
      const cp = [
        join(root, "sdk-java/target/test-classes"),
        join(root, "sdk-java/target/classes"),
        readFileSync(cpFile, "utf8").trim(),
      ].join(":");
      return ["java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", cp, "dev.runlater.conformance.Driver"];
    },
    startupTimeoutMs: 60_000,
  },
];

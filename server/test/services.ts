/**
 * URLs of the real Redis and MariaDB used by store tests. CI exports them (via
 * scripts/services.sh); when they are missing this starts the services itself, so a
 * plain `npx vitest` works too. Never skips: a test that needs a store gets one or fails.
 * And free ports, for the servers tests start and restart.
 */
import { execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../../scripts/services.sh", import.meta.url));

function ensure(service: "redis" | "redis-cluster" | "mariadb" | "chromium", variable: string): string {
  const existing = process.env[variable];
  if (existing) return existing;
  const exports = execFileSync("bash", [script, service], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  for (const line of exports.split("\n")) {
    const match = /^export (\w+)=(.*)$/.exec(line.trim());
    if (match) process.env[match[1]!] = match[2]!;
  }
  const url = process.env[variable];
  if (!url) throw new Error(`scripts/services.sh ${service} did not provide ${variable}`);
  return url;
}

export const redisUrl = (): string => ensure("redis", "RUNLATER_TEST_REDIS_URL");
export const mysqlUrl = (): string => ensure("mariadb", "RUNLATER_TEST_MYSQL_URL");
/** A Redis Cluster of 3 masters and 3 replicas (redis+cluster://…, scripts/redis-cluster.sh). */
export const redisClusterUrl = (): string => ensure("redis-cluster", "RUNLATER_TEST_REDIS_CLUSTER_URL");

/** A port free right now, so a restarted server can listen where its clients already point. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
/** Debian's Chromium, for the dashboard's browser tests (test/ui/). */
export const chromiumPath = (): string => ensure("chromium", "RUNLATER_TEST_CHROMIUM");

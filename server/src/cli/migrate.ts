import type { Command } from "commander";
import { invalidArgument } from "../domain/errors.js";
import type { CliIo } from "./io.js";

/**
 * `runlater migrate --store mysql://…`: applies the MySQL schema migrations and exits.
 * `serve` runs the same migrations on start; this is for deploys that migrate first.
 */
export function registerMigrate(program: Command, io: CliIo): void {
  program
    .command("migrate")
    .description("create or upgrade the schema of a mysql:// store (repeat --store for each shard), then exit")
    .requiredOption(
      "--store <url>",
      "mysql://user:password@host:port/database; repeat for several shards",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .action(async (opts: { store: string[] }) => {
      const other = opts.store.find((url) => !url.startsWith("mysql://"));
      if (other !== undefined)
        throw invalidArgument(
          "store",
          `migrate applies to mysql:// stores only, got "${other}" (memory and redis need no schema)`,
        );
      const { migrateUrls } = await import("../store/mysql/migrate.js"); // only here: the MySQL driver
      for (const [i, r] of (await migrateUrls(opts.store)).entries()) {
        const where = redact(r.url);
        io.out(
          r.applied.length > 0
            ? `shard ${i} (${where}): applied ${r.applied.join(", ")}; schema version ${r.version}\n`
            : `shard ${i} (${where}): up to date at schema version ${r.version}\n`,
        );
      }
    });
}

/** The URL without its password, for printing. */
function redact(url: string): string {
  return url.replace(/^(mysql:\/\/[^:@/]*):[^@/]*@/, "$1:***@");
}

import type { Command } from "commander";
import { invalidArgument } from "../domain/errors.js";
import { storeUrls } from "../store/open-store.js";
import { DEFAULT_SQLITE_URL, oneSqliteUrl } from "../store/sqlite/sqlite-url.js";
import type { CliIo } from "./io.js";

/**
 * `runlater migrate [--store …]`: creates or upgrades the schema of a SQLite file (the
 * default store) or of mysql:// databases, and exits. `serve` runs the same migrations on
 * start; this is for deploys that migrate first.
 */
export function registerMigrate(program: Command, io: CliIo): void {
  program
    .command("migrate")
    .description(
      "create or upgrade the schema of a sqlite: store (the default file) or of mysql:// stores (repeat --store for each shard), then exit",
    )
    .option(
      "--store <url>",
      `sqlite:PATH (default ${DEFAULT_SQLITE_URL}) or mysql://user:password@host:port/database; repeat mysql:// for several shards`,
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .action(async (opts: { store: string[] }) => {
      const urls = storeUrls(opts.store);
      if (urls.every((url) => url.startsWith("sqlite:"))) {
        const location = oneSqliteUrl(urls);
        // Loaded here: only the SQLite commands need node:sqlite. Takes the file's lock: refused while a server runs on it.
        const { openDatabase } = await import("../store/sqlite/open-database.js");
        const opened = openDatabase(location);
        opened.close();
        io.out(report(`sqlite (${opened.path})`, opened.migration));
        return;
      }
      const other = urls.find((url) => !url.startsWith("mysql://"));
      if (other !== undefined)
        throw invalidArgument(
          "store",
          `migrate applies to sqlite: and mysql:// stores, one kind at a time, got "${other}" (memory and redis need no schema)`,
        );
      const { migrateUrls } = await import("../store/mysql/migrate.js"); // only here: the MySQL driver
      for (const [i, r] of (await migrateUrls(urls)).entries()) io.out(report(`shard ${i} (${redact(r.url)})`, r));
    });
}

function report(where: string, r: { applied: string[]; version: number }): string {
  return r.applied.length > 0
    ? `${where}: applied ${r.applied.join(", ")}; schema version ${r.version}\n`
    : `${where}: up to date at schema version ${r.version}\n`;
}

/** The URL without its password, for printing. */
function redact(url: string): string {
  return url.replace(/^(mysql:\/\/[^:@/]*):[^@/]*@/, "$1:***@");
}

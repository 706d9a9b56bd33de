/**
 * Which shard holds what, with several --store URLs. Placement is stored data
 * (../placement.ts): each queue's shard per partition in table queue_placement on shard 0,
 * so shards can be appended to the --store list without moving anything. Queue metadata
 * lives on shard 0.
 *
 * This file checks the list at open. Every shard records its index (shard_meta 'index')
 * and shard 0 the count (shard_meta 'shards_total'), so:
 * - the first N URLs (N = the recorded count) must be the shards they were, in order;
 * - URLs beyond them are added shards: each must hold no queue, lease or job, and gets its
 *   index recorded, and the count grows;
 * - fewer URLs than recorded (a shard removed) is refused.
 * A deployment from before schema version 4 recorded nothing: its first open records the
 * list it is given, so upgrade with the same list, then add shards (docs/mysql.md).
 */
import { type Conn, run, type Shard, select } from "./shard.js";

const readMeta = async (c: Conn, name: string): Promise<number | undefined> => {
  const [row] = await select<{ value: number | string }>(c, "SELECT value FROM shard_meta WHERE name = ?", [name]);
  return row === undefined ? undefined : Number(row.value);
};

/** Checks and records the shard list; returns the shard count of queues without a stored placement. */
export async function checkShards(shards: Shard[]): Promise<number> {
  const shard0 = shards[0]!;
  const [created, total] = await shard0.session(async (c) => [
    await readMeta(c, "shards"),
    await readMeta(c, "shards_total"),
  ]);
  const known = total ?? created ?? 0;
  if (shards.length < known) {
    throw new Error(
      `the mysql store has ${known} shards, but ${shards.length} --store URLs were given: shards cannot be removed (give every URL, in the original order, new ones last)`,
    );
  }
  const indexes = await Promise.all(shards.map((s) => s.session((c) => readMeta(c, "index"))));
  for (const [i, recorded] of indexes.entries()) {
    if (recorded !== undefined && recorded !== i) {
      throw new Error(
        `mysql shard ${i} was shard ${recorded}: give the --store URLs in their original order, new ones last`,
      );
    }
    if (recorded === undefined && i < known) {
      throw new Error(
        `mysql shard ${i} is not one of the store's ${known} shards (it has no shard index): URL ${i} must be the shard it was (added shards go last)`,
      );
    }
  }
  await Promise.all(
    indexes.map(async (recorded, i) => {
      if (recorded !== undefined) return;
      const shard = shards[i]!;
      // An added shard must be empty: rows there would be another deployment's. (Before
      // version 4 nothing was recorded: then every shard is taken as it is, in list order.)
      if (known > 0 && (await shard.session((c) => holdsData(c)))) {
        throw new Error(
          `mysql shard ${i} holds runlater data but no shard index: it is not a new shard; give the --store URLs in their original order, new ones last`,
        );
      }
      const now = await shard.session(async (c) => {
        await run(c, "INSERT IGNORE INTO shard_meta (name, value) VALUES ('index', ?)", [i]);
        return readMeta(c, "index");
      });
      if (now !== i)
        throw new Error(
          `mysql shard ${i} was just recorded as shard ${now} by another server: give every server the same --store list`,
        );
    }),
  );
  return shard0.session(async (c) => {
    await run(c, "INSERT IGNORE INTO shard_meta (name, value) VALUES ('shards', ?)", [shards.length]);
    // Never lowered: servers opening at once with the old and the longer list agree on the longer.
    await run(
      c,
      "INSERT INTO shard_meta (name, value) VALUES ('shards_total', ?) ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value))",
      [shards.length],
    );
    return (await readMeta(c, "shards"))!;
  });
}

async function holdsData(c: Conn): Promise<boolean> {
  for (const table of ["queues", "leases", "jobs"]) {
    if ((await select(c, `SELECT 1 FROM ${table} LIMIT 1`)).length > 0) return true;
  }
  return false;
}

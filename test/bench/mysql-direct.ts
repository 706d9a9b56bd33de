/**
 * The contrast that motivated Pacer: many workers claiming straight from one MySQL table
 * with SELECT … FOR UPDATE SKIP LOCKED (no broker), on the same database, the same job
 * count, payload and number of jobs in flight as bench.ts's runlater workers. Each claimer
 * loops: claim a batch in a transaction, "run" it (nothing), ack it with one UPDATE.
 */
import { randomBytes } from "node:crypto";
import { createPool, type RowDataPacket } from "mysql2/promise";

export interface DirectSettings {
  mysqlUrl: string;
  jobs: number;
  payloadBytes: number;
  /** Independent claimers (connections), each with `batch` jobs in flight. */
  claimers: number;
  batch: number;
}

export interface DirectResult {
  processMs: number;
  claimQueries: number;
  /** Claim queries that came back empty while jobs were still left. */
  emptyClaims: number;
  /** Deadlocks and lock-wait timeouts, retried. */
  lockErrors: number;
}

export async function runDirectMysql(s: DirectSettings): Promise<DirectResult> {
  const pool = createPool({ uri: s.mysqlUrl, connectionLimit: s.claimers + 2 });
  const table = `bench_direct_${Date.now()}`;
  try {
    await pool.query(
      `CREATE TABLE ${table} (
         id BIGINT AUTO_INCREMENT PRIMARY KEY,
         state TINYINT NOT NULL DEFAULT 0,
         priority TINYINT NOT NULL DEFAULT 1,
         run_after BIGINT NOT NULL,
         claim_token VARCHAR(32) NULL,
         finished_at BIGINT NULL,
         body BLOB NOT NULL,
         KEY claimable (state, priority, run_after, id)
       ) ENGINE=InnoDB`,
    );
    const body = Buffer.alloc(s.payloadBytes, 120);
    const now = Date.now();
    for (let i = 0; i < s.jobs; i += 1000) {
      const rows = Array.from({ length: Math.min(1000, s.jobs - i) }, () => [now, body]);
      await pool.query(`INSERT INTO ${table} (run_after, body) VALUES ?`, [rows]);
    }

    let done = 0;
    let claimQueries = 0;
    let emptyClaims = 0;
    let lockErrors = 0;
    const started = performance.now();
    const claimer = async () => {
      while (done < s.jobs) {
        const conn = await pool.getConnection();
        let ids: number[] = [];
        const token = randomBytes(8).toString("hex");
        try {
          await conn.beginTransaction();
          const [rows] = await conn.query<RowDataPacket[]>(
            `SELECT id FROM ${table} WHERE state = 0 AND run_after <= ? ORDER BY priority, run_after, id LIMIT ? FOR UPDATE SKIP LOCKED`,
            [Date.now(), s.batch],
          );
          claimQueries++;
          ids = rows.map((r) => Number(r.id));
          if (ids.length > 0)
            await conn.query(`UPDATE ${table} SET state = 1, claim_token = ? WHERE id IN (?)`, [token, ids]);
          await conn.commit();
        } catch (err) {
          await conn.rollback().catch(() => {});
          const code = (err as { code?: string }).code;
          if (code !== "ER_LOCK_DEADLOCK" && code !== "ER_LOCK_WAIT_TIMEOUT") throw err;
          lockErrors++;
          ids = [];
        } finally {
          conn.release();
        }
        if (ids.length === 0) {
          if (done < s.jobs) emptyClaims++;
          await new Promise((r) => setTimeout(r, 5)); // a polling worker's pause
          continue;
        }
        await pool.query(`UPDATE ${table} SET state = 2, finished_at = ? WHERE id IN (?) AND claim_token = ?`, [
          Date.now(),
          ids,
          token,
        ]);
        done += ids.length;
      }
    };
    await Promise.all(Array.from({ length: s.claimers }, claimer));
    return { processMs: performance.now() - started, claimQueries, emptyClaims, lockErrors };
  } finally {
    await pool.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
    await pool.end();
  }
}

--[[
  jobInsertMany (one shard): inserts pending jobs, all or nothing: every partition named
  must exist (its marker) before anything is written. A job whose idempotency key is live
  in its partition (the engine routes a key to one partition) is not inserted; the live
  job's id is returned instead, also for duplicates inside the batch. A job with an
  ordering key joins the key's sequence at its seq; behind a job of the key that has not
  ended (or an earlier one of the batch) it is inserted waiting (insert.lua).
  KEYS[1]  <prefix>:{shard}:checks   (routing only: the partitions come from the job ids)
  ARGV     prefix, then per job: id, its stored prefix (META in job_record.lua, packed by codec.ts
           encodeNewJob: pending, updated now, seq 0), body
  Returns  { position, liveId, ... }: the jobs not inserted (1-based positions in the
           request) and the live job each one's idempotency key named; {} when all were.
  Errors   "QUEUE_NOT_FOUND <queue>" when a partition marker is missing.
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include insert
local parts, tags = planInsert(2)
if not parts then return redis.error_reply("QUEUE_NOT_FOUND " .. tags) end
local out = insertPlanned(2, parts, tags)
flushCounts()
return out

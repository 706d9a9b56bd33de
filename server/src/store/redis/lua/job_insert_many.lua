--[[
  jobInsertMany (one shard): inserts pending jobs, all or nothing: every partition named
  must exist (its marker) before anything is written. A job whose idempotency key is live
  in its partition (the engine routes a key to one partition) is not inserted; the live
  job's id is returned instead, also for duplicates inside the batch. A job with an
  ordering key joins the key's sequence at its seq; behind a job of the key that has not
  ended (or an earlier one of the batch) it is inserted waiting.
  KEYS[1]  <prefix>:{shard}:checks   (routing only: the partitions come from ARGV)
  ARGV     prefix, now, then per job: id, fields (packed as NEW_JOB below, by codec.ts
           encodeNewJob), body
  Returns  { position, liveId, ... }: the jobs not inserted (1-based positions in the
           request) and the live job each one's idempotency key named; {} when all were.
  Errors   "QUEUE_NOT_FOUND <queue>" when a partition marker is missing.
]]
--@include keys
--@include transitions
--@include job
local now = tonumber(ARGV[2])
-- queue, partition, priority, run_after, attempts_allowed, created_at, custom_status,
-- idempotency_key, ordering_key: three arguments per job instead of eleven.
local NEW_JOB = "<I4c0dddddI4c0I4c0I4c0"
-- Per partition (tag): whether it exists, how many jobs it gets (to reserve seqs in one
-- call), and its highest priority so far: one read or write per partition, not per job.
local parts, tags = {}, {}
local tagsOf = {} -- queue -> partition -> tag: the tag's concatenation once per partition
for i = 3, #ARGV, 3 do
  local queue, partition = struct.unpack("<I4c0d", ARGV[i + 1])
  local byPartition = tableIn(tagsOf, queue)
  local tag = byPartition[partition]
  if not tag then
    tag = tagOf(queue, N(partition))
    byPartition[partition] = tag
  end
  local part = parts[tag]
  if not part then
    if redis.call("EXISTS", tag .. ":q") == 0 then
      return redis.error_reply("QUEUE_NOT_FOUND " .. queue)
    end
    part = { n = 0, maxpr = tonumber(redis.call("HGET", tag .. ":n", "maxpr")) or 0, all = tag .. ":all" }
    parts[tag] = part
  end
  part.n = part.n + 1
  tags[i] = tag
end
for tag, part in pairs(parts) do
  part.seq = redis.call("HINCRBY", tag .. ":n", "seq", part.n) - part.n
  part.maxprBefore = part.maxpr
end
local out = {}
for i = 3, #ARGV, 3 do
  local id = ARGV[i]
  local _, _, priority, runAfter, attempts, createdAt, status, key, orderingKey = struct.unpack(NEW_JOB, ARGV[i + 1])
  local tag = tags[i]
  local part = parts[tag]
  local existing = key ~= "" and redis.call("HGET", tag .. ":idem", key)
  if existing and redis.call("EXISTS", jobKey(tag, existing)) == 1 then
    out[#out + 1] = (i - 3) / 3 + 1
    out[#out + 1] = existing
  else
    if key ~= "" then redis.call("HSET", tag .. ":idem", key, id) end
    part.seq = part.seq + 1
    local seq = part.seq
    local job = {
      id = id, st = "p", pr = priority, ra = runAfter, aa = attempts, ar = attempts, at = 0,
      ca = createdAt, ua = now, fa = 0, ce = 0, rd = 0, be = 0, bn = 0, sq = seq,
      ct = "", cs = status, ik = key, ok = orderingKey,
    }
    if orderingKey ~= "" then job.st = arrivalState(joinSequence(tag, job, seq)) end
    redis.call("SET", jobKey(tag, id), packJob(job) .. ARGV[i + 2])
    index(tag, job)
    zaddLater(part.all, N(runAfter), id)
    count(tag, job.st, 1)
    if priority > part.maxpr then part.maxpr = priority end
  end
end
for tag, part in pairs(parts) do
  if part.maxpr > part.maxprBefore then redis.call("HSET", tag .. ":n", "maxpr", part.maxpr) end
end
flushCounts()
return out

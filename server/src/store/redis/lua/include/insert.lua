--[[
  Inserting jobs, all or nothing: every partition named must exist (its marker) before
  anything is written. job_insert_many.lua is the enqueue; the workflow scripts
  (instance_insert.lua, instance_apply.lua) insert the queue jobs of an instance's runs the
  same way, inside their own step. The jobs are given in ARGV from an index on, three
  arguments each: id, its stored prefix (META in job_record.lua, packed by codec.ts
  encodeNewJob: pending, updated now, seq 0), body.
  Needs keys.lua, transitions.lua, job_record.lua, ledgers.lua, indexes.lua and
  sequences.lua included before it.
]]
-- Per partition (tag): whether it exists, how many jobs it gets (to reserve seqs in one
-- call), and its highest priority so far: one read or write per partition, not per job.
-- Returns the partitions and each job's tag by argument index, or nil and the queue of a
-- partition that does not exist (then nothing was written).
local function planInsert(from)
  local parts, tags = {}, {}
  for i = from, #ARGV, 3 do
    local tag = tagOfId(ARGV[i])
    local part = tag and parts[tag]
    if not part then
      if not tag or redis.call("EXISTS", tag .. ":q") == 0 then
        return nil, string.match(ARGV[i], "^([%w_]+)%.") or ARGV[i]
      end
      part = { n = 0, maxpr = tonumber(redis.call("HGET", tag .. ":n", "maxpr")) or 0, all = tag .. ":all" }
      parts[tag] = part
    end
    part.n = part.n + 1
    tags[i] = tag
  end
  return parts, tags
end

-- Inserts the jobs planInsert checked. A job whose idempotency key is live in its partition
-- (the engine routes a key to one partition) is not inserted; the live job's id is
-- returned instead, also for duplicates inside the batch. A job with an ordering key joins
-- the key's sequence at its seq; behind a job of the key that has not ended (or an earlier
-- one of the batch) it is inserted waiting. Returns { position, liveId, ... } for the jobs
-- not inserted (1-based positions among the jobs).
local function insertPlanned(from, parts, tags)
  for tag, part in pairs(parts) do
    part.seq = redis.call("HINCRBY", tag .. ":n", "seq", part.n) - part.n
    part.maxprBefore = part.maxpr
  end
  local out = {}
  for i = from, #ARGV, 3 do
    local id, prefix = ARGV[i], ARGV[i + 1]
    local priority, runAfter = struct.unpack("<dd", prefix, PRIORITY_AT)
    local orderingKey, key = struct.unpack("<I4c0I4c0", prefix, KEY_LENGTH_AT)
    local tag = tags[i]
    local part = parts[tag]
    local existing = key ~= "" and redis.call("HGET", tag .. ":idem", key)
    if existing and redis.call("EXISTS", jobKey(tag, existing)) == 1 then
      out[#out + 1] = (i - from) / 3 + 1
      out[#out + 1] = existing
    else
      if key ~= "" then redis.call("HSET", tag .. ":idem", key, id) end
      part.seq = part.seq + 1
      -- What the indexes and the ordering key need of the job (the rest is in its prefix).
      local job = { id = id, st = "p", pr = priority, ra = runAfter, sq = part.seq, ok = orderingKey }
      if orderingKey ~= "" then job.st = arrivalState(joinSequence(tag, job, job.sq)) end
      redis.call("SET", jobKey(tag, id), newJobString(prefix, job.st, job.sq, ARGV[i + 2]))
      index(tag, job)
      zaddLater(part.all, N(runAfter), id)
      count(tag, job.st, 1)
      if priority > part.maxpr then part.maxpr = priority end
    end
  end
  for tag, part in pairs(parts) do
    if part.maxpr > part.maxprBefore then redis.call("HSET", tag .. ":n", "maxpr", part.maxpr) end
  end
  return out
end

--[[
  The indexes that follow a job's state, and the per-state counters: pending zsets per
  priority, the waiting set, the failed zset, the retention list of succeeded jobs, the
  ledgers (ledgers.lua) for buffered and running jobs. index()/unindex() move a job in or
  out of its state's index; writes are collected per script and sent together by
  flushCounts(), which every writing script calls before it returns.
  Needs keys.lua, job_record.lua and ledgers.lua included before it.
]]
-- Pending members sort by seq inside one run_after score: the (run_after, seq) order.
-- The seq is written as 16 zero-padded digits: printf for all but the last three, and only
-- when those change (an insert's seqs are consecutive; printf per job was a twentieth of
-- an insert's instructions).
local seqHigh, seqHighText
local function seqText(seq)
  local high = math.floor(seq / 1000)
  if high ~= seqHigh then seqHigh, seqHighText = high, string.format("%013.0f", high) end
  local low = seq - high * 1000
  return seqHighText .. string.char(48 + math.floor(low / 100), 48 + math.floor(low / 10) % 10, 48 + low % 10)
end

local function pendingMember(job)
  return seqText(job.sq) .. job.id
end

-- <tag>:p:<priority>, made once per partition and priority in a call.
local pendingKeys = {}
local function pendingKey(tag, priority)
  local keys = tableIn(pendingKeys, tag)
  local key = keys[priority]
  if not key then
    key = tag .. ":p:" .. priority
    keys[priority] = key
  end
  return key
end

-- Index writes are collected and sent as one ZREM and one ZADD per key when the script
-- flushes (flushIndexes, called by flushCounts): a batch of n jobs costs a handful of
-- index calls instead of 2n. Removals go first, so a member removed and re-added ends up
-- present. A script that reads an index after changing it must flushIndexes() first.
local zrems, zadds = {}, {}

local function zremLater(key, member)
  local t = tableIn(zrems, key)
  t[#t + 1] = member
end

local function zaddLater(key, score, member)
  local t = tableIn(zadds, key)
  t[#t + 1] = score
  t[#t + 1] = member
end

-- Succeeded jobs are listed for retention in arrival order, not indexed by time: each
-- script appends one entry per partition and finishing time to <tag>:done:s, "<finished_at>
-- <id> <id> …" (a sorted-set entry per job was the largest single cost of an ACK inside
-- Redis, and ~100 bytes per retained job). Nothing removes a job from it: retention
-- (job_delete_finished.lua) deletes a listed job only if it is still succeeded at that
-- time, so one deleted early is skipped. ACK times of one server only grow; across servers
-- a clock skew can put an entry after a later one, which retention then reaches that much late.
local succeeded = {}

local function listSucceededAt(tag, finishedAt, id)
  local ids = tableIn(tableIn(succeeded, tag), finishedAt)
  ids[#ids + 1] = id
end

local function listSucceeded(tag, job)
  listSucceededAt(tag, job.fa, job.id)
end

local function flushSucceeded()
  for tag, byTime in pairs(succeeded) do
    for fa, ids in pairs(byTime) do redis.call("RPUSH", tag .. ":done:s", N(fa) .. " " .. table.concat(ids, " ")) end
  end
  succeeded = {}
end

-- unpack() is bounded by Lua's C stack (LUAI_MAXCSTACK, 8000 slots in Redis): send long
-- argument lists in chunks well below it (a ZADD chunk is twice as many values).
local CHUNK = 1000

local function flushIndexes()
  for key, members in pairs(zrems) do
    for i = 1, #members, CHUNK do redis.call("ZREM", key, unpack(members, i, math.min(i + CHUNK - 1, #members))) end
  end
  for key, args in pairs(zadds) do
    for i = 1, #args, 2 * CHUNK do redis.call("ZADD", key, unpack(args, i, math.min(i + 2 * CHUNK - 1, #args))) end
  end
  zrems, zadds = {}, {}
  flushLedgers()
  flushSucceeded()
end

local function unindex(tag, job)
  local st = job.st
  if st == "p" then zremLater(pendingKey(tag, job.pr), pendingMember(job))
  elseif st == "w" then zremLater(tag .. ":w", job.id)
  elseif st == "b" then ledgerLeave(bufferLedger(tag), batchName(job))
  elseif st == "r" then ledgerLeave(claimChecks, checkName(job))
  elseif st == "f" then zremLater(tag .. ":done:f", job.id) end -- (succeeded: see listSucceeded)
end

local function index(tag, job)
  local st = job.st
  if st == "p" then zaddLater(pendingKey(tag, job.pr), N(job.ra), pendingMember(job))
  elseif st == "w" then zaddLater(tag .. ":w", N(job.ra), job.id)
  elseif st == "b" then ledgerJoin(bufferLedger(tag), batchName(job), job.be, job.id)
  elseif st == "r" then ledgerJoin(claimChecks, checkName(job), job.ce, job.id)
  elseif st == "s" then listSucceeded(tag, job)
  else zaddLater(tag .. ":done:f", N(job.fa), job.id) end
end

-- Per-state job counters (<tag>:n) change with every job but are written once per script:
-- count() collects the deltas and flushCounts(), which every writing script calls before
-- it returns, applies them (two calls fewer per job on every batch).
local counts = {}

local function count(tag, st, delta)
  local c = tableIn(counts, tag)
  c[st] = (c[st] or 0) + delta
end

local function flushCounts()
  flushIndexes()
  for tag, c in pairs(counts) do
    for st, delta in pairs(c) do
      if delta ~= 0 then redis.call("HINCRBY", tag .. ":n", st, delta) end
    end
  end
  counts = {}
end

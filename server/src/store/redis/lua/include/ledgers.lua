--[[
  The ledgers (below) and the two this store keeps: the claim checks, which the claim sweep
  reads, and the buffer batches, which a new owner releases and bufferedJobs lists for peek
  and stats.
  Needs keys.lua and job_record.lua included before it.
]]
-- Ledgers: where a sorted-set entry per job cost too much for what it served, a batch of
-- jobs that entered a state together is recorded once: its ids under a name (a string of
-- "<id> " items at <key>:<name>), a score for the batch in the zset <key>, and a count of
-- the jobs still in it (hash <counts>). A job leaving the state only lowers its batch's
-- count, once per batch and script; the batch goes when its count reaches 0. Whoever reads
-- a batch's ids checks each job's own string (the truth): a listed job may have left.
--   Claim checks (per shard): a hand-out's running jobs, named <claim token>@<expiry>,
--     scored by the expiry; the claim sweep reads due ones (job_claim_expire.lua). A sorted-
--     set entry per job written at hand-out and removed at ACK was a tenth of Redis's work
--     per job; most checks now go (all their jobs ACKed) before they come due.
--   Buffer batches (per partition): a claim's buffered jobs, named <epoch>.<claim number>,
--     scored by the epoch; a new owner releases older epochs' batches, peek and stats list them.
local function newLedger(key, counts)
  return { key = key, counts = counts, joins = {}, deltas = {} }
end

local function ledgerJoin(ledger, name, score, id)
  local ids = ledger.joins[name]
  if not ids then
    ids = { score = score }
    ledger.joins[name] = ids
  end
  ids[#ids + 1] = id
  ledger.deltas[name] = (ledger.deltas[name] or 0) + 1
end

local function ledgerLeave(ledger, name)
  ledger.deltas[name] = (ledger.deltas[name] or 0) - 1
end

local function ledgerDelete(ledger, name)
  redis.call("DEL", ledger.key .. ":" .. name)
  redis.call("HDEL", ledger.counts, name)
  redis.call("ZREM", ledger.key, name)
end

-- Joins before counts: a job that left and rejoined one batch in this script (apply()
-- unindexes and indexes) must not see it deleted in between.
local function ledgerFlush(ledger)
  for name, ids in pairs(ledger.joins) do
    redis.call("APPEND", ledger.key .. ":" .. name, table.concat(ids, " ") .. " ")
    redis.call("ZADD", ledger.key, N(ids.score), name)
  end
  for name, delta in pairs(ledger.deltas) do
    -- A count below 1 (also one that was never there): no job is left in the batch.
    if delta ~= 0 and redis.call("HINCRBY", ledger.counts, name, delta) <= 0 then ledgerDelete(ledger, name) end
  end
  ledger.joins, ledger.deltas = {}, {}
end

-- Calls visit(id) for each id a batch lists, in order, while it returns true; returns the
-- unvisited rest of the list ("" when all were visited).
local function ledgerWalk(ledger, name, visit)
  local listed = redis.call("GET", ledger.key .. ":" .. name) or ""
  local at = 1
  while at <= #listed do
    local id, nextAt = idAt(listed, at)
    if not visit(id) then return string.sub(listed, at) end
    at = nextAt
  end
  return ""
end

local claimChecks = newLedger(CHECKS, CHECK_COUNTS)

-- A batch's jobs mostly share one claim and one buffer batch: a ledger name is made again
-- only when its two parts differ from the last call's.
local function lastNamer(make)
  local lastA, lastB, lastName
  return function(a, b)
    if a ~= lastA or b ~= lastB then lastA, lastB, lastName = a, b, make(a, b) end
    return lastName
  end
end

local checkNameOf = lastNamer(function(token, expiresAt) return token .. "@" .. N(expiresAt) end)

local function checkName(job)
  return checkNameOf(job.ct, job.ce)
end

local buffers = {}

local function bufferLedger(tag)
  local ledger = buffers[tag]
  if not ledger then
    ledger = newLedger(tag .. ":buf", tag .. ":buf-n")
    buffers[tag] = ledger
  end
  return ledger
end

local batchNameOf = lastNamer(function(epoch, batch) return N(epoch) .. "." .. N(batch) end)

local function batchName(job)
  return batchNameOf(job.be, job.bn)
end

local function flushLedgers()
  ledgerFlush(claimChecks)
  for _, ledger in pairs(buffers) do ledgerFlush(ledger) end
end

-- The jobs a partition's buffer batches list that are still buffered under them: each
-- once (a job released and claimed again may be listed by two live batches). With
-- `whole`, each is read whole (`job._stored` is the stored string, body included).
local function bufferedJobs(tag, whole)
  local ledger, jobs = bufferLedger(tag), {}
  for _, name in ipairs(redis.call("ZRANGE", ledger.key, 0, -1)) do
    ledgerWalk(ledger, name, function(id)
      local job
      if whole then
        local stored = redis.call("GET", jobKey(tag, id))
        job = stored and unpackJob(id, stored)
      else
        job = loadJob(tag, id)
      end
      if job and job.st == "b" and batchName(job) == name then jobs[#jobs + 1] = job end
      return true
    end)
  end
  return jobs
end

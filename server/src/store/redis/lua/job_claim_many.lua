--[[
  jobClaimMany: moves up to `limit` due pending jobs of one partition to buffered under
  `epoch`, best first (priority, then run_after, then seq): O(k log n), no scan.
  The patch is transitions.lua's claimIntoBuffer, the same for every job of the batch.
  KEYS[1]  <tag>:lease   the claim is refused unless its epoch is the lease's
  KEYS[2]  <tag>:n       counters (maxpr: highest priority ever enqueued here; claims: the
                         claim count, which numbers buffer batches)
  KEYS[3]  <prefix>:{shard}:checks   with a start (below) only
  ARGV     prefix, queue, partition, epoch, limit, now, maxBytes ("" for no bound: else the
           claim stops before the job whose body would take the claimed bodies past it,
           claiming the first whatever its size: domain/byte-budget.ts's rule); then, to hand
           out at once (store/claim-start.ts, Store.jobClaimMany's `start`): claimToken,
           claimExpiresAt, retryDelay, max, maxBytes
  Returns  { "id id …", stored, ... }: the claimed jobs' ids joined by spaces, then each
           one's stored string as it was read (pending: codec.ts applies the claim's patch,
           claimIntoBuffer, to its copy); {} for a stale epoch. With a start, then how many
           of the first ones were handed out (running: codec.ts applies handOut too).
  One GET and one 13-byte SETRANGE per job: nothing is unpacked or packed (the lean path,
  see lean_paths.lua) but, under a byte bound, the three lengths that say where the body starts.
  The jobs are recorded as one buffer batch (ledgers.lua), not one by one.
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include lean_paths
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, limit, now, maxBytes = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if tonumber(redis.call("HGET", KEYS[1], "epoch")) ~= epoch then return {} end
-- A start's token, padded before anything is written (a token too long errors here).
local paddedToken = ARGV[8] and padToken(ARGV[8])
local maxPriority = tonumber(redis.call("HGET", KEYS[2], "maxpr")) or 0
-- Every claimed job gets the same patch, whose fields (st, be) lead the layout, and joins
-- this claim's buffer batch (bn, next to them: see ledgers.lua): the claim's
-- write is the same 13 bytes for every job, over the start of the string.
local patch = claimIntoBuffer(epoch)
patch.bn = redis.call("HINCRBY", KEYS[2], "claims", 1) % 4294967296 -- a 4-byte field (job_record.lua)
local claimedHead = struct.pack("<c1dI4", patch.st, patch.be, patch.bn)
local batch, buffer = batchName(patch), bufferLedger(tag)
local PENDING = string.byte("p")
local ids, out = {}, { "" }
local bytes, full = 0, false
for priority = 1, maxPriority do
  if full or #ids >= limit then break end
  local pendingSet = pendingKey(tag, priority)
  local members = redis.call("ZRANGEBYSCORE", pendingSet, "-inf", N(now), "LIMIT", "0", N(limit - #ids))
  -- The members read are the set's first ones (from -inf): those this loop gets through
  -- go at the end with one ZREMRANGEBYRANK, not a ZREM member by member.
  local consumed = 0
  for _, member in ipairs(members) do
    local id = string.sub(member, 17)
    local key = jobKey(tag, id)
    local stored = redis.call("GET", key) -- whole: the reply carries the body
    local pending = stored and string.byte(stored, 1) == PENDING
    if maxBytes and pending then
      bytes = bytes + #stored - prefixSize(stored)
      if bytes > maxBytes and #ids > 0 then
        full = true
        break
      end
    end
    consumed = consumed + 1
    if pending then
      redis.call("SETRANGE", key, OFFSET_0, claimedHead)
      ledgerJoin(buffer, batch, epoch, id)
      ids[#ids + 1] = id
      out[#out + 1] = stored
    end -- else: an entry without its pending job (deleted): dropped with the rest
  end
  if consumed > 0 then redis.call("ZREMRANGEBYRANK", pendingSet, "0", N(consumed - 1)) end
end
out[1] = table.concat(ids, " ")
count(tag, "p", -#ids)
count(tag, "b", #ids)
-- The start: the leading claimed jobs on their first attempt, up to max and maxBytes (the
-- first whatever its size), handed out as job_start_many would (store/claim-start.ts's rule).
if ARGV[8] then
  local token, expiresAt, retryDelay = ARGV[8], tonumber(ARGV[9]), tonumber(ARGV[10])
  local max, maxStartBytes = tonumber(ARGV[11]), tonumber(ARGV[12])
  local started, startBytes = 0, 0
  for i, id in ipairs(ids) do
    local stored = out[i + 1]
    if started >= max or struct.unpack("<d", stored, ATTEMPT_AT) ~= 0 then break end
    startBytes = startBytes + #stored - prefixSize(stored)
    if started > 0 and startBytes > maxStartBytes then break end
    if not startBuffered(tag, id, epoch, token, paddedToken, expiresAt, retryDelay, now) then break end
    started = started + 1
  end
  count(tag, "b", -started)
  count(tag, "r", started)
  out[#out + 1] = started
end
flushCounts()
return out

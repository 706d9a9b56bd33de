--[[
  jobClaimMany: moves up to `limit` due pending jobs of one partition to buffered under
  `epoch`, best first (priority, then run_after, then seq): O(k log n), no scan.
  The patch is transitions.lua's claimIntoBuffer, the same for every job of the batch.
  KEYS[1]  <tag>:lease   the claim is refused unless its epoch is the lease's
  KEYS[2]  <tag>:n       counters (maxpr: highest priority ever enqueued here)
  ARGV     prefix, queue, partition, epoch, limit, now
  Returns  { record, ... } (after the change), or {} for a stale epoch.
]]
--@include keys
--@include transitions
--@include job
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, limit, now = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
if tonumber(redis.call("HGET", KEYS[1], "epoch")) ~= epoch then return {} end
local maxPriority = tonumber(redis.call("HGET", KEYS[2], "maxpr")) or 0
-- Every claimed job gets the same patch: write it with one HSET each, and answer with
-- the job as read (one HMGET each) with the patched positions overwritten, instead of a
-- full load, a generic apply and a second read.
local patch = claimIntoBuffer(epoch, now)
local hset, position = {}, {}
for i, f in ipairs(RECORD_FIELDS) do position[f] = i + 1 end -- +1: the id goes first
for f, v in pairs(patch) do
  hset[#hset + 1] = f
  hset[#hset + 1] = type(v) == "number" and N(v) or v
end
local out = {}
for priority = 1, maxPriority do
  if #out >= limit then break end
  local pendingKey = tag .. ":p:" .. priority
  local members = redis.call("ZRANGEBYSCORE", pendingKey, "-inf", N(now), "LIMIT", 0, limit - #out)
  for _, member in ipairs(members) do
    local id = string.sub(member, 17)
    local key = jobKey(tag, id)
    local rec = redis.call("HMGET", key, unpack(RECORD_FIELDS))
    zremLater(pendingKey, member)
    if rec[1] == "p" then
      redis.call("HSET", key, unpack(hset))
      zaddLater(tag .. ":buf", N(epoch), id)
      count(tag, "p", -1)
      count(tag, "b", 1)
      table.insert(rec, 1, id)
      for f = 1, #hset, 2 do rec[position[hset[f]]] = hset[f + 1] end
      out[#out + 1] = rec
    end -- else: an entry without its pending job (deleted): dropped above
  end
end
flushCounts()
return out

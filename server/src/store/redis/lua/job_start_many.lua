--[[
  jobStartMany: buffered jobs under `epoch` (which must be the lease's) become running per
  their hand-out plan, charging an attempt and entering the shard's running index. One
  call carries plans that share their claim token and expiry (the broker gives a hand-out
  batch one of each; the store splits other lists into runs).
  KEYS[1]  <tag>:lease
  KEYS[2]  <prefix>:{shard}:checks
  ARGV     prefix, queue, partition, epoch, now, claimToken, claimExpiresAt, then per run
           of plans sharing a retry delay: retryDelayMs, the plans' ids joined by spaces
  Returns  one character per plan, "1" started or "0" skipped (not buffered under `epoch`),
           "" for a stale epoch; the broker applies the same handOut to its own copy.
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include lean_paths
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, now = tonumber(ARGV[4]), tonumber(ARGV[5])
if tonumber(redis.call("HGET", KEYS[1], "epoch")) ~= epoch then return "" end
local token, expiresAt = ARGV[6], tonumber(ARGV[7])
local paddedToken = padToken(token) -- (errors for a token too long, before any write)
local out, started = {}, 0
for r = 8, #ARGV, 2 do
  local retryDelay, ids, at = tonumber(ARGV[r]), ARGV[r + 1], 1
  while at <= #ids do
    local id
    id, at = idAt(ids, at)
    -- The lean path (lean_paths.lua's startBuffered): the hand-out changes head fields only.
    if startBuffered(tag, id, epoch, token, paddedToken, expiresAt, retryDelay, now) then
      out[#out + 1] = "1"
      started = started + 1
    else
      out[#out + 1] = "0"
    end
  end
end
count(tag, "b", -started)
count(tag, "r", started)
flushCounts()
return table.concat(out)

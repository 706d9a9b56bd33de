--[[
  jobStartMany: buffered jobs under `epoch` (which must be the lease's) become running per
  their hand-out plan, charging an attempt and entering the shard's running index. One
  call carries plans that share their claim token and expiry (the broker gives a hand-out
  batch one of each; the store splits other lists into runs).
  KEYS[1]  <tag>:lease
  KEYS[2]  <prefix>:{shard}:checks
  ARGV     prefix, queue, partition, epoch, now, claimToken, claimExpiresAt,
           then per plan: id, retryDelayMs
  Returns  one character per plan, "1" started or "0" skipped (not buffered under `epoch`),
           "" for a stale epoch; the broker applies the same handOut to its own copy.
]]
--@include keys
--@include transitions
--@include job
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, now = tonumber(ARGV[4]), tonumber(ARGV[5])
if tonumber(redis.call("HGET", KEYS[1], "epoch")) ~= epoch then return "" end
local token, expiresAt = ARGV[6], tonumber(ARGV[7])
local paddedToken = padToken(token) -- (errors for a token too long, before any write)
local out, started = {}, 0
for i = 8, #ARGV, 2 do
  -- The lean path (job.lua's startBuffered): the hand-out changes head fields only.
  if startBuffered(tag, ARGV[i], epoch, token, paddedToken, expiresAt, tonumber(ARGV[i + 1]), now) then
    out[#out + 1] = "1"
    started = started + 1
  else
    out[#out + 1] = "0"
  end
end
count(tag, "b", -started)
count(tag, "r", started)
flushCounts()
return table.concat(out)

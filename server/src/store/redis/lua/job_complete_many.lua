--[[
  jobCompleteMany (one shard): succeed per item, each fenced by its claim token.
  KEYS[1]  <prefix>:{shard}:running   the jobs' partitions are derived from their ids
  ARGV     prefix, now, then per item: id, claimToken, customStatus
  Returns  one outcome per item: "a" acknowledged, "s" stale claim, "n" not found; an
           acknowledged job whose ordering key's next job it promoted: "a+<promotedAt>".
]]
--@include keys
--@include transitions
--@include job
local now = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV, 3 do
  local id = ARGV[i]
  local tag = tagOfId(id)
  local job = tag and loadJob(tag, id)
  local outcome = checkClaim(job, ARGV[i + 1])
  if outcome == "a" then
    local promoted = apply(tag, job, succeed(job, ARGV[i + 2], now))
    if promoted then outcome = "a+" .. N(promoted.ra) end
  end
  out[#out + 1] = outcome
end
flushCounts()
return out

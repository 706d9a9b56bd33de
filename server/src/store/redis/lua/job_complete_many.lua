--[[
  jobCompleteMany (one shard): succeed per item, each fenced by its claim token.
  KEYS[1]  <prefix>:{shard}:checks   the jobs' partitions are derived from their ids
  ARGV     prefix, now, then per item: id, claimToken, customStatus
  Returns  one outcome per item, joined by spaces: "a" acknowledged, "s" stale claim, "n" not found; an
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
  local status = ARGV[i + 2]
  -- The lean path (job.lua) reads the head only: enough to check the claim, and a succeed
  -- without a status changes head fields only. A job with an ordering key (it leaves the
  -- key's sequence) or a status to append is loaded whole and goes through apply().
  local job = tag and loadHead(tag, id)
  local outcome = checkClaim(job, ARGV[i + 1])
  if outcome == "a" then
    if status == "" and not job.keyed then
      applyToHead(tag, job, succeed(job, status, now))
    else
      job = loadJob(tag, id)
      local promoted = apply(tag, job, succeed(job, status, now))
      if promoted then outcome = "a+" .. N(promoted.ra) end
    end
  end
  out[#out + 1] = outcome
end
flushCounts()
return table.concat(out, " ")

--[[
  jobCompleteMany (one shard): succeed per item, each fenced by its claim token.
  KEYS[1]  <prefix>:{shard}:checks   the jobs' partitions are derived from their ids
  ARGV     prefix, now, then per item: id, claimToken, customStatus
  Returns  one outcome per item, joined by spaces: "a" acknowledged, "s" stale claim, "n"
           not found; an acknowledged job whose ordering key's next job it promoted:
           "a+<promotedAt>".
]]
--@include keys
--@include transitions
--@include job
local now = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV, 3 do
  local id, token, status = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local tag = tagOfId(id)
  local outcome = "n"
  -- The lean path (job.lua's succeedRunning) for a succeed without a status; a job with an
  -- ordering key or a status to append is loaded whole and goes through apply().
  if tag and status == "" then outcome = succeedRunning(tag, id, token, now) end
  if outcome == "a" then
    count(tag, "r", -1)
    count(tag, "s", 1)
  elseif tag and (outcome == nil or status ~= "") then
    local job = loadJob(tag, id)
    outcome = checkClaim(job, token)
    if outcome == "a" then
      local promoted = apply(tag, job, succeed(job, status, now))
      if promoted then outcome = "a+" .. N(promoted.ra) end
    end
  end
  out[#out + 1] = outcome
end
flushCounts()
return table.concat(out, " ")

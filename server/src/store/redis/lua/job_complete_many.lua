--[[
  jobCompleteMany (one shard): succeed per item, each fenced by its claim token.
  KEYS[1]  <prefix>:{shard}:checks   the jobs' partitions are derived from their ids
  ARGV     prefix, now, then per run of items sharing a claim token and a status:
           claimToken, customStatus, the items' ids joined by spaces (an ACK batch is
           mostly one or two hand-outs' jobs: a token travels once per run, not per job)
  Returns  one outcome per item, joined by spaces: "a" acknowledged, "s" stale claim, "n"
           not found; an acknowledged job whose ordering key's next job it promoted:
           "a+<promotedAt>"; "w" for a workflow job whose claim holds (nothing written:
           its ACK goes through instance_apply.lua). With any "w", the reply is
           { outcomes, context, ... }: the outcomes, then each "w" job's workflow context
           in order.
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
--@include lean_paths
local now = tonumber(ARGV[2])
local out, contexts = {}, { "" }
local acked = {} -- per partition, jobs the lean path acknowledged (counted once at the end)
for r = 3, #ARGV, 3 do
  local token, status, ids, at = ARGV[r], ARGV[r + 1], ARGV[r + 2], 1
  while at <= #ids do
    local id
    id, at = idAt(ids, at)
    local tag = tagOfId(id)
    local outcome = "n"
    -- The lean path (lean_paths.lua's succeedRunning) for a succeed without a status; a job with an
    -- ordering key or a status to append is loaded whole and goes through apply().
    if tag and status == "" then outcome = succeedRunning(tag, id, token, now) end
    if outcome == "a" then
      acked[tag] = (acked[tag] or 0) + 1
    elseif tag and (outcome == nil or status ~= "") then
      local job = loadJob(tag, id)
      outcome = checkClaim(job, token)
      if outcome == "a" and job.wf then
        outcome = "w"
        contexts[#contexts + 1] = job.wf
      elseif outcome == "a" then
        local promoted = apply(tag, job, succeed(job, status, now))
        if promoted then outcome = "a+" .. N(promoted.ra) end
      end
    end
    out[#out + 1] = outcome
  end
end
for tag, n in pairs(acked) do
  count(tag, "r", -n)
  count(tag, "s", n)
end
flushCounts()
if #contexts == 1 then return table.concat(out, " ") end
contexts[1] = table.concat(out, " ")
return contexts

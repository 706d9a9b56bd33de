--[[
  Cancelling queue jobs (a workflow step's or a schedule fire's): each job named is deleted
  (removeJob, as DeleteJobs does) if no worker holds it and it has not ended: pending,
  waiting or buffered. Running and ended jobs stay.
  Needs keys.lua, transitions.lua, job_record.lua, ledgers.lua, indexes.lua, sequences.lua
  and apply.lua included before it.
]]
-- `ids` joined by spaces (idAt); an id that names no partition names no job.
local function cancelJobs(ids, now)
  local at = 1
  while at <= #ids do
    local id
    id, at = idAt(ids, at)
    local tag = tagOfId(id)
    local job = tag and loadJob(tag, id)
    if job and (job.st == "p" or job.st == "w" or job.st == "b") then removeJob(tag, job, now) end
  end
end

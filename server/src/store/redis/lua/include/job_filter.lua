--[[
  The admin filters as job_scan.lua and job_delete_ids.lua apply them (the body regex is the
  caller's: JS regexes do not run in Lua), the rule of domain/job-filter.ts.
]]
-- Users see waiting and buffered jobs as pending; filters name the visible state.
local function visible(st)
  if st == "b" or st == "w" then return "p" end
  return st
end

-- Filter by visible state ("" any), priority (0 any), future ("" any, "1" run_after > now, "0" due).
local function matches(job, state, priority, future, now)
  if state ~= "" and visible(job.st) ~= state then return false end
  if priority ~= 0 and job.pr ~= priority then return false end
  if future == "1" and not (job.ra > now) then return false end
  if future == "0" and job.ra > now then return false end
  return true
end

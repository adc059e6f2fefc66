-- wrk script for the dispatch benchmark: POSTs a valid XXL-JOB TriggerParam to the executor's /run, a
-- unique logId per request (so the executor runs every one; a repeated logId would be refused as a
-- repeat trigger), job ids cycling over 1..jobs as the admin's fires do, handler noopJobHandler.
--   wrk -t2 -c32 -d10s -s run.lua -H 'XXL-JOB-ACCESS-TOKEN: <token>' http://127.0.0.1:<port>/run -- <jobs> <first logId>
-- Thread t numbers its logIds from <first logId> + t * 10^10. Prints the answers whose envelope code was
-- not 200 (a wrong token or a refused run is HTTP 200 with code 500, which wrk alone would count as done).
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  jobs = tonumber(args[1]) or 10000
  next_log = (tonumber(args[2]) or 1000000000000) + tid * 10000000000
  job = tid * 7919 % jobs
  failed = 0
  now_ms = os.time() * 1000
  wrk.headers["Content-Type"] = "application/json;charset=UTF-8"
end

function request()
  next_log = next_log + 1
  job = job % jobs + 1
  local body = string.format(
    '{"jobId":%d,"executorHandler":"noopJobHandler","executorParams":"","executorBlockStrategy":"SERIAL_EXECUTION",' ..
    '"executorTimeout":0,"logId":%.0f,"logDateTime":%.0f,"glueType":"BEAN","glueSource":"","glueUpdatetime":0,' ..
    '"broadcastIndex":0,"broadcastTotal":0}', job, next_log, now_ms)
  return wrk.format("POST", nil, nil, body)
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"code":200', 1, true) then
    failed = failed + 1
  end
end

function done(summary, latency, requests)
  local f = 0
  for _, t in ipairs(threads) do f = f + (t:get("failed") or 0) end
  io.write(string.format("not_ok %d\n", f))
end

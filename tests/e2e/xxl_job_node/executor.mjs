// A third-party XXL-JOB executor for cronwheel's e2e tests (tests/e2e/xxl_job_node_e2e_test.cpp): the npm
// package xxl-job 0.1.7 ("Provide xxl-job SDK for NodeJs", express 5 + axios), started as its README shows,
// with two BEAN handlers: nodeTraceHandler appends "<logId> <jobId> <receivedMs> ran <executorParams>" to the
// trace file and succeeds (its callback's handleMsg is "Success"); nodeEchoHandler traces the same way and
// returns "echo:<executorParams>" (the package sends JSON.stringify of it as the handleMsg: "\"echo:...\"").
// <executorParams> is the parameter the handler received, as a JSON string (one line). A /run the package
// refuses (it answers code 500 while the job's previous fire has not called back yet) is traced as
// "<logId> <jobId> <receivedMs> refused", so a test sees every /run.
//
// nodeLinesHandler traces the same way, writes "node line 1" ... "node line N" to the fire's log through the
// package's logger (N = executorParams, default 100) and succeeds: the admin's archive of fire output pulls that
// log with /log (tests/e2e/output_archive_e2e_test.cpp).
//
// Usage: node executor.mjs --app-name NAME --admin http://127.0.0.1:PORT --access-token TOKEN --port PORT
//                          --trace-file PATH [--max-run-s 600] [--log-storage memory|local] [--work-dir DIR]
// --log-storage local: the package writes each fire's log to a file (under logs/ in the working directory,
// --work-dir when given) and serves it on /log; memory (the package's default) keeps no log to serve.
// It listens on 127.0.0.1 only. SIGTERM or SIGINT: it deregisters (registryRemove), closes its connections,
// prints "connections accepted: N" and exits 0. It also exits by itself when its parent process is gone or
// after --max-run-s seconds, so a test that dies leaves nothing running.
//
// Where the package deviates from XXL-JOB's executors, and what this program does about it:
// - Its axios instance has no timeout (XXL-JOB's executor gives up on the admin after 3 s): set to 3 s here,
//   so a stalled admin cannot hold a job "running" for ever.
// - A failed registry or callback request is an unhandled promise rejection, which ends a Node 20 process:
//   logged and counted here instead. XXL-JOB's executor registers again at the next beat and keeps failed
//   callbacks in a retry file; this package sends a failed callback once more as a failure (handle code 500
//   for a fire that succeeded), and when that fails too the job stays "running" and every later /run of it
//   is refused until the process restarts. The test fails on any failed request.
// - It registers "<baseUrl><route>", and its routes live under route (default "/job"): the executor's
//   address has a path, "http://127.0.0.1:PORT/job" (XXL-JOB's admin and cronwheel's call <address>/run).
// - Its callback's logDateTim is the time of the callback, not the fire's; XXL-JOB's admin and cronwheel's
//   find the fire by logId.
// - A request without a JSON body gets code 500 "Is app.use(express.json()) missing?": XXL-JOB 3.x sends
//   /beat without a body (FAILOVER would take this executor for dead); cronwheel's admin sends a JSON body.
// - Its /log answers code 500 "No local logger found." unless logStorage is "local" (default "memory").
// - It refuses a /run while the job's previous fire has not called back (code 500) instead of queueing it
//   under SERIAL_EXECUTION, and ignores the block strategy.
import { appendFileSync, mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import express from 'express';
import { createXxlJobExecutor, request } from 'xxl-job';

const { values: args } = parseArgs({
  options: {
    'app-name': { type: 'string' },
    'admin': { type: 'string' },
    'access-token': { type: 'string' },
    'port': { type: 'string' },
    'trace-file': { type: 'string' },
    'max-run-s': { type: 'string', default: '600' },
    'log-storage': { type: 'string', default: 'memory' },
    'work-dir': { type: 'string' },
  },
});
for (const name of ['app-name', 'admin', 'access-token', 'port', 'trace-file']) {
  if (!args[name]) {
    console.error(`executor.mjs: --${name} is required`);
    process.exit(2);
  }
}
const port = Number(args.port);
const trace = args['trace-file'];
if (args['work-dir']) {
  mkdirSync(args['work-dir'], { recursive: true });
  process.chdir(args['work-dir']);  // the package's logs/ folder goes here
}

function Trace(logId, jobId, receivedMs, outcome, executorParams) {
  const params = executorParams === undefined ? '' : ` ${JSON.stringify(executorParams ?? '')}`;
  appendFileSync(trace, `${logId} ${jobId} ${receivedMs} ${outcome}${params}\n`);
}

request.defaults.timeout = 3000;
let rejections = 0;
process.on('unhandledRejection', (reason) => {
  ++rejections;
  console.error(`request failed: ${reason?.message ?? reason} (a registry or callback request; unhandled rejection)`);
});

const jobHandlers = new Map();
jobHandlers.set('nodeTraceHandler', async (logger, req, executorParams) => {
  // The package calls the handler in the same tick as it reads the /run: this is when the fire arrived.
  Trace(req.logId, req.jobId, Date.now(), 'ran', executorParams);
});
jobHandlers.set('nodeLinesHandler', async (logger, req, executorParams) => {
  Trace(req.logId, req.jobId, Date.now(), 'ran', executorParams);
  const lines = Number(executorParams) || 100;
  for (let i = 1; i <= lines; ++i) logger.info(`node line ${i}`);
});
jobHandlers.set('nodeEchoHandler', async (logger, req, executorParams) => {
  Trace(req.logId, req.jobId, Date.now(), 'ran', executorParams);
  return `echo:${executorParams ?? ''}`;
});

const app = express();
app.use(express.json());
// Trace each /run the package refuses (its answer's code is not 200); the ones it accepts the handler traced.
app.post('/job/run', (req, res, next) => {
  const receivedMs = Date.now();
  const send = res.send.bind(res);
  res.send = (body) => {
    if (body && typeof body === 'object' && body.code !== 200) {
      Trace(req.body?.logId ?? 0, req.body?.jobId ?? 0, receivedMs, 'refused');
      console.error(`refused /run of log ${req.body?.logId}: ${body.msg}`);
    }
    return send(body);
  };
  next();
});

let connections = 0;
let executor;
const server = app.listen(port, '127.0.0.1', () => {
  executor = createXxlJobExecutor({
    app,
    jobHandlers,
    appType: 'express',
    accessToken: args['access-token'],
    logStorage: args['log-storage'],
    baseUrl: `http://127.0.0.1:${port}`,
    executorKey: args['app-name'],
    scheduleCenterUrl: args.admin,
  });
  executor.initialization();
  console.log(`xxl-job executor on 127.0.0.1:${port}, app ${args['app-name']}, admin ${args.admin}`);
});
server.on('connection', () => ++connections);
server.on('error', (e) => {
  console.error(`executor.mjs: cannot listen on 127.0.0.1:${port}: ${e.message}`);
  process.exit(1);
});

let stopping = false;
async function Stop(why) {
  if (stopping) return;
  stopping = true;
  console.log(`stopping: ${why}`);
  try {
    if (executor) await executor.cancel();
  } catch (e) {
    console.error(`registryRemove failed: ${e.message}`);
  }
  server.closeAllConnections();
  server.close();
  console.log(`requests failed: ${rejections}`);
  console.log(`connections accepted: ${connections}`);
  process.exit(0);
}
process.on('SIGTERM', () => Stop('SIGTERM'));
process.on('SIGINT', () => Stop('SIGINT'));
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) Stop('the parent process is gone');
}, 1000).unref();
setTimeout(() => Stop(`--max-run-s ${args['max-run-s']} passed`), Number(args['max-run-s']) * 1000).unref();

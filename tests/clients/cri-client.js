#!/usr/bin/env node
// A small CRI client for tests/cri.bats: one RuntimeService call per run.
//   NODE_PATH=.../node_modules node cri-client.js SOCKET METHOD 'JSON request'
// prints the response as one JSON line (bytes as text); a gRPC error prints
// its code and message on stderr and exits 1. Calls time out after 60 s.
// For tests/bench/clients.sh, METHOD "cycle" takes
//   {"n": N, "create": CreateContainerRequest}
// and runs Create, Start, Stop (timeout 0), Remove N times in this one
// process, printing {"ms": [each cycle's milliseconds]}.
'use strict';
const path = require('path');
const grpc = require('@grpc/grpc-js');
const loader = require('@grpc/proto-loader');

const [sock, method, body] = process.argv.slice(2);
if (!sock || !method) {
  process.stderr.write('usage: cri-client.js SOCKET METHOD [JSON]\n');
  process.exit(2);
}
const def = loader.loadSync(path.join(__dirname, 'cri.proto'),
  { keepCase: true, longs: String, enums: String, defaults: true });
const RuntimeService = grpc.loadPackageDefinition(def).runtime.v1.RuntimeService;
const client = new RuntimeService('unix://' + sock, grpc.credentials.createInsecure());
const call = (m, req) => new Promise((resolve, reject) =>
  client[m](req, { deadline: new Date(Date.now() + 60000) }, (e, r) => (e ? reject(e) : resolve(r))));

async function cycles(req) {
  const ms = [];
  for (let i = 0; i < req.n; i++) {
    const t0 = process.hrtime.bigint();
    const { container_id } = await call('CreateContainer', req.create);
    await call('StartContainer', { container_id });
    await call('StopContainer', { container_id, timeout: 0 });
    await call('RemoveContainer', { container_id });
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { ms };
}

function fail(err) {
  process.stderr.write(`${grpc.status[err.code] || err.code}: ${err.details || err.message}\n`);
  process.exit(1);
}

function print(res) {
  for (const k of ['stdout', 'stderr'])
    if (Buffer.isBuffer(res[k])) res[k] = res[k].toString();
  process.stdout.write(JSON.stringify(res) + '\n');
  client.close();
}

if (method === 'cycle') {
  cycles(JSON.parse(body)).then(print, fail);
} else if (typeof client[method] !== 'function') {
  process.stderr.write(`unknown method ${method}\n`);
  process.exit(2);
} else {
  call(method, JSON.parse(body || '{}')).then(print, fail);
}

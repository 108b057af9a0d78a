#!/usr/bin/env node
// A small CRI client for tests/cri.bats: one RuntimeService call per run.
//   NODE_PATH=.../node_modules node cri-client.js SOCKET METHOD 'JSON request'
// prints the response as one JSON line (bytes as text); a gRPC error prints
// its code and message on stderr and exits 1. Calls time out after 60 s.
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
if (typeof client[method] !== 'function') {
  process.stderr.write(`unknown method ${method}\n`);
  process.exit(2);
}
const deadline = new Date(Date.now() + 60000);
client[method](JSON.parse(body || '{}'), { deadline }, (err, res) => {
  if (err) {
    process.stderr.write(`${grpc.status[err.code] || err.code}: ${err.details || err.message}\n`);
    process.exit(1);
  }
  for (const k of ['stdout', 'stderr'])
    if (Buffer.isBuffer(res[k])) res[k] = res[k].toString();
  process.stdout.write(JSON.stringify(res) + '\n');
  client.close();
});

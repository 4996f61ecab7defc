#!/usr/bin/env node
// ort_npy.js — tests/bench/ort/ort_bench.js for the zoo: the same timing
// (`runs` timed runs after `warmup` untimed ones, each timed around
// session.run alone, same session options), but the inputs are read from
// .npy files (float32 or int64), so that ORT runs on the very input kiln
// runs on and token inputs work.
//
// Usage: node ort_npy.js MODEL.onnx --input NAME=PATH.npy [--input ...]
//                        [--threads N] [--runs N] [--warmup N]
// onnxruntime-node is taken from $ORT_NODE_MODULES (a node_modules
// directory), by default tests/bench/ort/node_modules.
// Prints one JSON object: {"model", "threads", "runs", "min_ms", "median_ms"}.
'use strict';

const fs = require('fs');
const path = require('path');
const modules = process.env.ORT_NODE_MODULES || path.join(__dirname, '..', 'ort', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

function fail(message) {
  process.stderr.write(`ort_npy: ${message}\n`);
  process.exit(2);
}

// A C-order little-endian .npy file of float32 or int64.
function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`${file}: not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', start, start + headerLength);
  const descr = /'descr':\s*'([^']*)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) fail(`${file}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s)
      .map(Number);
  const data = bytes.buffer.slice(bytes.byteOffset + start + headerLength, bytes.byteOffset + bytes.length);
  if (descr === '<f4') return new ort.Tensor('float32', new Float32Array(data), shape);
  if (descr === '<i8') return new ort.Tensor('int64', new BigInt64Array(data), shape);
  fail(`${file}: dtype ${descr} (float32 or int64 only)`);
}

async function main() {
  const argv = process.argv.slice(2);
  const args = {model: null, feeds: {}, threads: 1, runs: 100, warmup: 5};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--input') {
      const text = argv[++i] || '';
      const at = text.indexOf('=');
      if (at <= 0) fail(`--input wants NAME=PATH.npy, got '${text}'`);
      args.feeds[text.slice(0, at)] = readNpy(text.slice(at + 1));
    } else if (flag === '--threads' || flag === '--runs' || flag === '--warmup') {
      args[flag.slice(2)] = Number(argv[++i]);
    } else if (!flag.startsWith('--') && !args.model) {
      args.model = flag;
    } else {
      fail(`unexpected argument '${flag}'`);
    }
  }
  if (!args.model) fail('no model given');
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: args.threads,
    interOpNumThreads: args.threads,
  });
  for (let r = 0; r < args.warmup; r++) await session.run(args.feeds);
  const times = [];
  for (let r = 0; r < args.runs; r++) {
    const start = process.hrtime.bigint();
    await session.run(args.feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const middle = times.length >> 1;
  const median = times.length % 2 ? times[middle] : (times[middle - 1] + times[middle]) / 2;
  process.stdout.write(JSON.stringify({model: args.model, threads: args.threads, runs: args.runs,
    min_ms: times[0], median_ms: median}) + '\n');
}

main().catch((error) => fail(error.message));

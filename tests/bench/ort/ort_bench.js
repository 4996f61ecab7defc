#!/usr/bin/env node
// ort_bench.js — time one ONNX model in ONNX Runtime (onnxruntime-node, CPU
// execution provider): `runs` timed runs after `warmup` untimed ones, each
// timed around session.run alone, inputs random and bound once.
//
// Usage: node ort_bench.js MODEL.onnx --input NAME=D0,D1,... [--input ...]
//                          [--threads N] [--runs N] [--warmup N]
// Prints one JSON object: {"model", "threads", "runs", "min_ms", "median_ms"}.
'use strict';

const ort = require('onnxruntime-node');

function usage(message) {
  process.stderr.write(`ort_bench: ${message}\n` +
      'usage: node ort_bench.js MODEL.onnx --input NAME=D0,D1,... [--threads N] [--runs N] [--warmup N]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const args = {model: null, inputs: [], threads: 1, runs: 100, warmup: 5};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${flag} needs a value`);
      return argv[++i];
    };
    const count = (minimum) => {
      const text = value();
      const n = Number(text);
      if (!Number.isInteger(n) || n < minimum) usage(`${flag} must be an integer >= ${minimum}, got '${text}'`);
      return n;
    };
    if (flag === '--input') {
      const text = value();
      const at = text.indexOf('=');
      const dims = at > 0 ? text.slice(at + 1).split(',').map(Number) : [];
      if (at <= 0 || dims.some((d) => !Number.isInteger(d) || d < 0)) usage(`--input wants NAME=D0,D1,..., got '${text}'`);
      args.inputs.push({name: text.slice(0, at), dims});
    } else if (flag === '--threads') {
      args.threads = count(1);
    } else if (flag === '--runs') {
      args.runs = count(1);
    } else if (flag === '--warmup') {
      args.warmup = count(0);
    } else if (flag.startsWith('--') || args.model) {
      usage(`unexpected argument '${flag}'`);
    } else {
      args.model = flag;
    }
  }
  if (!args.model) usage('no model given');
  if (args.inputs.length === 0) usage('no --input given');
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: args.threads,
    interOpNumThreads: args.threads,
  });
  const feeds = {};
  for (const input of args.inputs) {
    const count = input.dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(count);
    for (let i = 0; i < count; i++) data[i] = Math.random() * 2 - 1;
    feeds[input.name] = new ort.Tensor('float32', data, input.dims);
  }
  for (let r = 0; r < args.warmup; r++) await session.run(feeds);
  const times = [];
  for (let r = 0; r < args.runs; r++) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const middle = times.length >> 1;
  const median = times.length % 2 ? times[middle] : (times[middle - 1] + times[middle]) / 2;
  process.stdout.write(JSON.stringify({model: args.model, threads: args.threads, runs: args.runs,
    min_ms: times[0], median_ms: median}) + '\n');
}

main().catch((error) => {
  process.stderr.write(`ort_bench: ${error.message}\n`);
  process.exit(1);
});

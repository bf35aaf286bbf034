// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Loads a Trace Event JSON file with Chrome DevTools' trace engine (the Performance panel's
// model, @paulirish/trace_engine) and prints, as JSON, what it made of it: per process its
// name and every complete event with the parent the engine's own tree gives it; counters and
// instant events; anything the engine logged as an error or warning. Exits 1 if parsing threw.
//   node trace_engine_check.mjs PACKAGE_DIR TRACE.json
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [pkg, file] = process.argv.slice(2);
const complaints = [];
for (const level of ['error', 'warn']) {
  console[level] = (...a) => complaints.push(`${level}: ${a.join(' ')}`);
}
// The engine uses DOMRect, which node lacks (the package's README says to polyfill it).
globalThis.DOMRect = class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, {x, y, width, height});
  }
};
// Node 18 (Debian bookworm's) lacks Array.prototype.toSorted, which one of its insights calls.
if (!Array.prototype.toSorted) {
  Object.defineProperty(Array.prototype, 'toSorted', {
    value(compare) { return [...this].sort(compare); },
  });
}
const Trace = await import(pathToFileURL(path.join(pkg, 'models/trace/trace.js')).href);
const json = JSON.parse(fs.readFileSync(file, 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
try {
  await model.parse(json.traceEvents);
} catch (e) {
  process.stdout.write(JSON.stringify({threw: String(e && e.stack || e)}) + '\n');
  process.exit(1);
}
const data = model.parsedTrace().data;
const renderer = data.Renderer;
const out = {processes: {}, counters: 0, instants: 0, complaints};
for (const [pid, proc] of renderer.processes) {
  const nameEvent = data.Meta.processNames.get(pid);
  const p = {name: nameEvent ? nameEvent.args.name : null, spans: []};
  for (const [, thread] of proc.threads) {
    for (const e of thread.entries) {
      const node = renderer.entryToNode.get(e);
      p.spans.push({
        name: e.name, span_id: e.args.span_id, status: e.args.status,
        in_tree: node !== undefined,
        tree_parent: node && node.parent ? node.parent.entry.args.span_id : null,
      });
    }
  }
  out.processes[pid] = p;
}
for (const e of model.parsedTrace().traceEvents) {
  if (e.ph === 'C') out.counters++;
  if (e.ph === 'i' || e.ph === 'I') out.instants++;
}
process.stdout.write(JSON.stringify(out) + '\n');

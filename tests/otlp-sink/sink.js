// SPDX-License-Identifier: MIT
// A strict OTLP/HTTP metrics and traces sink for buildtel's tests, on
// 127.0.0.1 only (POST /v1/metrics and /v1/traces).
// It decodes every body with the protobuf definitions bundled in
// @opentelemetry/otlp-transformer (0.217.0 metrics, 0.57.2 traces; protobuf
// and JSON, gzip too),
// answers 400 to anything malformed, and appends what it got to a record
// file, one JSON object per request, for the test to assert on.
//
//   node sink.js --port-file F --record F [--mode ok|400|503-once|hang]
//
// Strictness beyond decoding: a protobuf body must re-encode to the same
// bytes (canonical field order, minimal varints, no unknown fields); a JSON
// body may only use the lowerCamelCase keys of the OTLP JSON mapping, enums
// as integers, 64-bit integers as decimal strings and ids as lowercase hex.
'use strict';
const http = require('http');
const fs = require('fs');
const zlib = require('zlib');
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root');

const Req = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
// otlp-transformer 0.217 bundles protobuf types for metrics only (its
// traces have a hand-written serializer and no decoder); 0.57.2, the last
// release that bundles the trace types too, decodes the traces.
const traceRoot = require('otlp-transformer-traces/build/src/generated/root');
const TraceReq = traceRoot.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const mode = args.mode || 'ok';
if (!args['port-file'] || !args.record) {
  console.error('usage: node sink.js --port-file F --record F [--mode ok|400|503-once|hang]');
  process.exit(2);
}

// The JSON mapping, as far as metrics go: key -> type.
const KV = ['KeyValue'];
const schema = {
  Request: { resourceMetrics: ['ResourceMetrics'] },
  ResourceMetrics: { resource: 'Resource', scopeMetrics: ['ScopeMetrics'], schemaUrl: 'string' },
  Resource: { attributes: KV, droppedAttributesCount: 'uint32' },
  ScopeMetrics: { scope: 'Scope', metrics: ['Metric'], schemaUrl: 'string' },
  Scope: { name: 'string', version: 'string', attributes: KV, droppedAttributesCount: 'uint32' },
  Metric: { name: 'string', description: 'string', unit: 'string', gauge: 'Gauge', sum: 'Sum', metadata: KV },
  Gauge: { dataPoints: ['Point'] },
  Sum: { dataPoints: ['Point'], aggregationTemporality: 'enum', isMonotonic: 'bool' },
  Point: {
    attributes: KV, startTimeUnixNano: 'u64', timeUnixNano: 'u64', asDouble: 'double', asInt: 'i64',
    exemplars: ['Exemplar'], flags: 'uint32',
  },
  Exemplar: {
    filteredAttributes: KV, timeUnixNano: 'u64', asDouble: 'double', asInt: 'i64', spanId: 'hex8',
    traceId: 'hex16',
  },
  TraceRequest: { resourceSpans: ['ResourceSpans'] },
  ResourceSpans: { resource: 'Resource', scopeSpans: ['ScopeSpans'], schemaUrl: 'string' },
  ScopeSpans: { scope: 'Scope', spans: ['Span'], schemaUrl: 'string' },
  Span: {
    traceId: 'hex16', spanId: 'hex8', traceState: 'string', parentSpanId: 'hex8', flags: 'uint32',
    name: 'string', kind: 'enum', startTimeUnixNano: 'u64', endTimeUnixNano: 'u64', attributes: KV,
    droppedAttributesCount: 'uint32', events: ['Event'], droppedEventsCount: 'uint32',
    links: ['Link'], droppedLinksCount: 'uint32', status: 'Status',
  },
  Event: { timeUnixNano: 'u64', name: 'string', attributes: KV, droppedAttributesCount: 'uint32' },
  Link: { traceId: 'hex16', spanId: 'hex8', traceState: 'string', attributes: KV, droppedAttributesCount: 'uint32', flags: 'uint32' },
  Status: { message: 'string', code: 'enum' },
  KeyValue: { key: 'string', value: 'AnyValue' },
  AnyValue: { stringValue: 'string', boolValue: 'bool', intValue: 'i64', doubleValue: 'double' },
};

function check(v, type, path) {
  if (Array.isArray(type)) {
    if (!Array.isArray(v)) throw new Error(`${path}: not an array`);
    v.forEach((x, i) => check(x, type[0], `${path}[${i}]`));
    return;
  }
  switch (type) {
    case 'string': if (typeof v !== 'string') throw new Error(`${path}: not a string`); return;
    case 'bool': if (typeof v !== 'boolean') throw new Error(`${path}: not a boolean`); return;
    case 'uint32': if (!Number.isInteger(v) || v < 0) throw new Error(`${path}: not a uint32`); return;
    case 'enum': if (!Number.isInteger(v)) throw new Error(`${path}: enum not an integer`); return;
    case 'double':
      if (typeof v !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(v)) throw new Error(`${path}: not a double`);
      return;
    case 'u64': if (typeof v !== 'string' || !/^(0|[1-9][0-9]*)$/.test(v)) throw new Error(`${path}: 64-bit integer not a decimal string`); return;
    case 'i64': if (typeof v !== 'string' || !/^(0|-?[1-9][0-9]*)$/.test(v)) throw new Error(`${path}: 64-bit integer not a decimal string`); return;
    case 'hex8': case 'hex16': {
      const n = type === 'hex8' ? 16 : 32;
      if (typeof v !== 'string' || !new RegExp(`^[0-9a-f]{${n}}$`).test(v)) throw new Error(`${path}: not ${n} lowercase hex digits`);
      return;
    }
  }
  const fields = schema[type];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${path}: not an object`);
  for (const k of Object.keys(v)) {
    if (!(k in fields)) throw new Error(`${path}.${k}: not a key of ${type} in the OTLP JSON mapping`);
    check(v[k], fields[k], `${path}.${k}`);
  }
}

// Exemplar ids: hex in JSON, base64 for protobufjs's fromObject, hex
// again in the record.
function exemplarIds(o, conv) {
  for (const rm of o.resourceMetrics || [])
    for (const sm of rm.scopeMetrics || [])
      for (const m of sm.metrics || [])
        for (const dp of ((m.gauge || m.sum || {}).dataPoints || []))
          for (const ex of dp.exemplars || [])
            for (const k of ['spanId', 'traceId'])
              if (k in ex) ex[k] = conv(ex[k]);
}

// Span ids: hex in JSON, base64 for protobufjs, hex again in the record.
function spanIds(o, conv) {
  for (const rs of o.resourceSpans || [])
    for (const ss of rs.scopeSpans || [])
      for (const sp of ss.spans || []) {
        for (const k of ['traceId', 'spanId', 'parentSpanId'])
          if (k in sp) sp[k] = conv(sp[k]);
        for (const l of sp.links || [])
          for (const k of ['traceId', 'spanId']) if (k in l) l[k] = conv(l[k]);
      }
}
const hexToB64 = (v) => Buffer.from(v, 'hex').toString('base64');
const b64ToHex = (v) => Buffer.from(v, 'base64').toString('hex');

// Decode one body strictly: Type the request message, schema its JSON
// mapping's name, ids(o, conv) the id fields to convert (hex <-> base64).
function decodeAs(Type, schemaName, ids, ct, body) {
  let msg;
  if (ct === 'application/x-protobuf') {
    msg = Type.decode(body);
    const again = Buffer.from(Type.encode(msg).finish());
    if (!again.equals(body)) throw new Error('protobuf body does not re-encode to the same bytes (non-canonical or unknown fields)');
  } else if (ct === 'application/json') {
    const text = body.toString('utf8');
    if (Buffer.from(text, 'utf8').compare(body) !== 0) throw new Error('JSON body is not valid UTF-8');
    const o = JSON.parse(text);
    check(o, schemaName, '$');
    ids(o, hexToB64);
    // (verify wants numbers for 64-bit fields; check() did the types)
    msg = Type.fromObject(o);
  } else {
    throw new Error(`unexpected Content-Type '${ct}'`);
  }
  const obj = Type.toObject(msg, { longs: String, enums: Number, bytes: String });
  ids(obj, b64ToHex);
  return obj;
}

const decode = (ct, body) => decodeAs(Req, 'Request', exemplarIds, ct, body);
const decodeTraces = (ct, body) => decodeAs(TraceReq, 'TraceRequest', spanIds, ct, body);

let count = 0;
function record(r) {
  fs.appendFileSync(args.record, JSON.stringify(r) + '\n');
}

const server = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > 64 << 20) req.destroy();
    else chunks.push(c);
  });
  req.on('end', () => {
    count++;
    const raw = Buffer.concat(chunks);
    const ct = (req.headers['content-type'] || '').split(';')[0].trim();
    const enc = req.headers['content-encoding'] || '';
    const r = {
      n: count, t: Date.now() / 1000, method: req.method, path: req.url, contentType: ct,
      contentEncoding: enc, bytes: raw.length,
      headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-') || k === 'authorization')),
    };
    const answer = (status, body, hdrs) => {
      r.status = status;
      record(r);
      if (status === 'hang') return; // accept, never answer
      res.writeHead(status, Object.assign({ 'Content-Type': ct === 'application/json' ? 'application/json' : 'application/x-protobuf' }, hdrs || {}));
      res.end(body);
    };
    if (req.method !== 'POST' || (req.url !== '/v1/metrics' && req.url !== '/v1/traces')) {
      r.error = 'not POST /v1/metrics or /v1/traces';
      return answer(404, '');
    }
    try {
      let body = raw;
      if (enc === 'gzip') {
        if (raw[0] !== 0x1f || raw[1] !== 0x8b) throw new Error('not a gzip member');
        body = zlib.gunzipSync(raw);
      } else if (enc !== '') {
        throw new Error(`unexpected Content-Encoding '${enc}'`);
      }
      r.request = req.url === '/v1/traces' ? decodeTraces(ct, body) : decode(ct, body);
    } catch (e) {
      r.error = String(e && e.message || e);
      return answer(400, ct === 'application/json' ? JSON.stringify({ code: 3, message: r.error }) : '');
    }
    if (mode === 'hang') return answer('hang');
    if (mode === '400') return answer(400, ct === 'application/json' ? '{"code":3,"message":"rejected by test"}' : '');
    if (mode === '503-once' && count === 1) return answer(503, '', { 'Retry-After': '1' });
    answer(200, ct === 'application/json' ? '{}' : '');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => {
  const tmp = args['port-file'] + '.tmp';
  fs.writeFileSync(tmp, String(server.address().port));
  fs.renameSync(tmp, args['port-file']);
});
process.on('SIGTERM', () => process.exit(0));

'use strict';
// Shared plumbing of the capture scenarios: an OpenTelemetry JS SDK that keeps every span in
// memory, a fetch that notes fakellm's request ids, the client-side clock, and the writers of the
// two fixture files (NAME.otlp.json and NAME.truth.json).
//
// Every scenario runs in its own node process (see capture.mjs), so the global tracer provider,
// the AI SDK's global telemetry registry and the instrumentations' patches never meet.

const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const api = require('@opentelemetry/api');
const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
const { InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');

// A dummy key: fakellm checks none, but the clients insist on one. It must never be a real key.
const DUMMY_API_KEY = 'capture-dummy-key';

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run the scenarios through capture.mjs or run.sh)`);
  return v;
}

// Base URL of fakellm, e.g. http://127.0.0.1:PORT (no /v1).
function fakellmURL() {
  return env('FAKELLM_URL').replace(/\/$/, '');
}

function outDir() {
  return env('CAPTURE_OUT');
}

// The client clock, in integer unix nanoseconds: performance.timeOrigin + performance.now(), added
// as the OpenTelemetry JS SDK's hrTime() adds them (whole milliseconds and the fraction apart, so
// no precision is lost to float64).
function nowUnixNano() {
  return perfToUnixNano(performance.now());
}

function perfToUnixNano(perfMs) {
  const o = performance.timeOrigin;
  const oMs = Math.trunc(o);
  const nMs = Math.trunc(perfMs);
  const fracNs = Math.round((o - oMs) * 1e6) + Math.round((perfMs - nMs) * 1e6);
  return (BigInt(oMs + nMs) * 1000000n + BigInt(fracNs)).toString();
}

// How far Date.now() (the clock the SDK stamps a span's start with when no start time is given)
// is ahead of performance.timeOrigin + performance.now() (the clock of the truth), in ms: the
// median of a few samples.
function wallMinusPerfMs() {
  const s = [];
  for (let i = 0; i < 9; i++) s.push(Date.now() - (performance.timeOrigin + performance.now()));
  s.sort((a, b) => a - b);
  return Math.round(s[4] * 1000) / 1000;
}

// setupTracing registers a global NodeTracerProvider that exports every ended span to memory.
// processor, when given, makes the span processor in front of the exporter (an instrumentation
// that is a span processor, such as @arizeai/openinference-vercel's); else a SimpleSpanProcessor.
function setupTracing(scenario, { processor } = {}) {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'otelitl-capture', 'otelitl.capture.scenario': scenario }),
    spanProcessors: [processor ? processor(exporter) : new SimpleSpanProcessor(exporter)],
  });
  provider.register();
  return { provider, exporter, tracer: api.trace.getTracer('otelitl-capture') };
}

// warmup runs fn with tracing suppressed (the SDK's tracer hands out non-recording spans), so
// that the first, cold request of the process (module loading, JIT, schema compilation) is not
// the one captured: on a cold process the client saw chunks up to ~100 ms after fakellm flushed
// them. The warm-up request is not in the fixtures; fakellm still counts it (so the captured
// request's fakellm_request_id is not 1).
async function warmup(fn) {
  const { suppressTracing } = require('@opentelemetry/core');
  return api.context.with(suppressTracing(api.context.active()), fn);
}

// recordingFetch wraps fetch and notes, for every request in order, fakellm's request id (the
// X-Fakellm-Request-Id response header), when fetch was called and when the response headers
// came, on the truth clock.
function recordingFetch(log, inner) {
  const base = inner || globalThis.fetch;
  return async (input, init) => {
    const fetchStart = nowUnixNano();
    const res = await base(input, init);
    const headersAt = nowUnixNano();
    const id = res.headers.get('x-fakellm-request-id');
    log.push({ id: id ? Number(id) : null, fetchStart, headersAt });
    return res;
  };
}

async function fetchArrivals(id) {
  const res = await globalThis.fetch(`${fakellmURL()}/debug/arrivals?id=${id}`);
  if (!res.ok) throw new Error(`arrivals of request ${id}: HTTP ${res.status}`);
  const body = await res.json();
  return (body.arrivals_unix_nano || []).map((n) => String(n));
}

// Timing notes the client-side truth of one streamed request.
class Timing {
  constructor() {
    this.start = nowUnixNano();
    this.chunks = [];
    this.end = null;
  }
  chunk() {
    this.chunks.push(nowUnixNano());
  }
  finish() {
    this.end = nowUnixNano();
  }
}

function packageVersion(name) {
  // Read the installed manifest directly: not every package exports ./package.json.
  const file = path.join(__dirname, '..', 'node_modules', name, 'package.json');
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

function packageVersions(names) {
  const out = {};
  for (const n of names) {
    // "ai6" is the npm alias of ai@6: report it under its alias so both can be told apart.
    out[n] = packageVersion(n);
  }
  return out;
}

// The JSON numbers of the truth file are integers of up to 19 digits: write them bare, not as
// strings, without going through float64.
function stringifyTruth(obj) {
  const marked = JSON.stringify(obj, (k, v) => (typeof v === 'bigint' ? `@@${v}@@` : v), 2);
  return marked.replace(/"@@(\d+)@@"/g, '$1') + '\n';
}

function asBig(s) {
  return s == null ? null : BigInt(s);
}

// mergeOTLP merges ExportTraceServiceRequests (as an exporter sends them, one per span with a
// simple span processor) into one, grouping spans by resource and then by instrumentation scope.
function mergeOTLP(requests) {
  const byResource = new Map();
  for (const req of requests) {
    for (const rs of req.resourceSpans || []) {
      const rkey = JSON.stringify([rs.resource, rs.schemaUrl]);
      if (!byResource.has(rkey)) byResource.set(rkey, { resource: rs.resource, schemaUrl: rs.schemaUrl, scopes: new Map() });
      const r = byResource.get(rkey);
      for (const ss of rs.scopeSpans || []) {
        const skey = JSON.stringify([ss.scope, ss.schemaUrl]);
        if (!r.scopes.has(skey)) r.scopes.set(skey, { scope: ss.scope, schemaUrl: ss.schemaUrl, spans: [] });
        r.scopes.get(skey).spans.push(...(ss.spans || []));
      }
    }
  }
  return {
    resourceSpans: [...byResource.values()].map((r) => ({
      resource: r.resource,
      scopeSpans: [...r.scopes.values()].map((sc) => ({
        scope: sc.scope,
        spans: sc.spans,
        ...(sc.schemaUrl !== undefined ? { schemaUrl: sc.schemaUrl } : {}),
      })),
      ...(r.schemaUrl !== undefined ? { schemaUrl: r.schemaUrl } : {}),
    })),
  };
}

// treeOrder puts the spans of every scope in a stable, readable order whatever their timing: a
// parent before its children (depth first), siblings by start time, then name. Two spans that
// start in the same millisecond (the SDK's start times are whole ms) keep their tree order.
function treeOrder(otlp) {
  const cmp = (a, b) => {
    const x = BigInt(a.startTimeUnixNano);
    const y = BigInt(b.startTimeUnixNano);
    return x < y ? -1 : x > y ? 1 : a.name.localeCompare(b.name);
  };
  for (const rs of otlp.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      const ids = new Set(ss.spans.map((s) => s.spanId));
      const children = new Map();
      const roots = [];
      for (const s of ss.spans) {
        if (s.parentSpanId && ids.has(s.parentSpanId)) {
          if (!children.has(s.parentSpanId)) children.set(s.parentSpanId, []);
          children.get(s.parentSpanId).push(s);
        } else {
          roots.push(s);
        }
      }
      const out = [];
      const walk = (list) => {
        for (const s of list.sort(cmp)) {
          out.push(s);
          walk(children.get(s.spanId) || []);
        }
      };
      walk(roots);
      ss.spans = out;
    }
  }
  return otlp;
}

// agentStepRequests returns writeFixtures' requests for an agent's steps, one per request
// (fetches[i]). The application does not start a step's request itself: a step's start_unix_nano
// becomes when the SDK called fetch for it, and the time the step first reached the application,
// its start until then, goes into the request's extra as seenKey, after the step's number, finish
// reason, chunk kinds and what more(step) adds. With withExtra false the requests have no extra.
function agentStepRequests(steps, fetches, seenKey, { withExtra = true, more = () => ({}) } = {}) {
  return steps.map((s, i) => {
    const seen = s.timing.start;
    s.timing.start = fetches[i].fetchStart;
    return {
      timing: s.timing,
      fetch: fetches[i],
      outputTokens: s.outputTokens,
      extra: withExtra ? { step: i + 1, finish_reason: s.finishReason, chunk_kind: [...new Set(s.kinds)].join(','), ...more(s), [seenKey]: BigInt(seen) } : {},
    };
  });
}

// writeFixtures writes NAME.otlp.json (every span, OTLP/HTTP JSON) and NAME.truth.json. The spans
// come from the in-memory exporter (provider, exporter), or, for a package that insists on its
// own tracer provider and exporter, as the ExportTraceServiceRequests it sent (otlpRequests).
async function writeFixtures({ scenario, instrumentation, packages, model, provider, exporter, otlpRequests, requests, notes, wallMinusPerf }) {
  let otlp;
  if (otlpRequests) {
    otlp = mergeOTLP(otlpRequests);
  } else {
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    otlp = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
  }
  treeOrder(otlp);
  const nspans = otlp.resourceSpans.reduce((n, rs) => n + rs.scopeSpans.reduce((m, ss) => m + ss.spans.length, 0), 0);
  if (nspans === 0) throw new Error(`${scenario}: no span was exported`);
  const dir = outDir();
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${scenario}.otlp.json`), JSON.stringify(otlp, null, 2) + '\n');

  const reqs = [];
  for (const r of requests) {
    const id = r.fetch ? r.fetch.id : null;
    // A scenario whose server is not fakellm (bedrock-*: lib/bedrock-mock.cjs) passes the times its
    // server wrote each content chunk as r.arrivals.
    const arrivals = id == null ? (r.arrivals || []) : await fetchArrivals(id);
    reqs.push({
      start_unix_nano: asBig(r.timing.start),
      first_chunk_unix_nano: asBig(r.timing.chunks[0]),
      chunk_unix_nano: r.timing.chunks.map(asBig),
      end_unix_nano: asBig(r.timing.end),
      fakellm_request_id: id,
      fakellm_arrivals_unix_nano: arrivals.map(asBig),
      output_tokens: r.outputTokens,
      fetch_start_unix_nano: asBig(r.fetch && r.fetch.fetchStart),
      response_headers_unix_nano: asBig(r.fetch && r.fetch.headersAt),
      ...(r.extra || {}),
    });
  }
  const truth = {
    scenario,
    instrumentation,
    packages,
    model,
    requests: reqs,
    clock: {
      truth: 'performance.timeOrigin + performance.now(), integer unix ns',
      wall_minus_perf_ms: wallMinusPerf,
    },
    notes,
  };
  fs.writeFileSync(path.join(dir, `${scenario}.truth.json`), stringifyTruth(truth));
  if (provider) await provider.shutdown();
  console.log(`${scenario}: ${nspans} spans, ${reqs.length} request(s) -> ${dir}`);
}

module.exports = {
  DUMMY_API_KEY,
  fakellmURL,
  nowUnixNano,
  perfToUnixNano,
  wallMinusPerfMs,
  setupTracing,
  warmup,
  recordingFetch,
  fetchArrivals,
  Timing,
  packageVersion,
  packageVersions,
  mergeOTLP,
  writeFixtures,
  agentStepRequests,
};

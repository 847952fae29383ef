// openlit-openai: OpenLIT's openlit.init() (its own NodeTracerProvider and OTLP/HTTP exporter,
// its openai instrumentation hooking require) around a streamed Chat Completions call of the
// openai package. OpenLIT does not use a tracer provider registered before it unless that has
// addSpanProcessor (SDK 1.x; the 2.x SDK has none), so the capture takes its spans the way it
// ships them: openlit.init gets otlpEndpoint = a small OTLP/HTTP receiver in this process, which
// keeps every ExportTraceServiceRequest (JSON) OpenLIT's exporter posts.
const http = require('node:http');
const api = require('@opentelemetry/api');
const common = require('../lib/common.cjs');
const { captureChat, CHAT_NOTES } = require('../lib/openai-chat.cjs');

const scenario = 'openlit-openai';
const model = 'cap-openlit';

function startReceiver(received) {
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      if (req.method === 'POST' && req.url === '/v1/traces') {
        if (!/json/.test(req.headers['content-type'] || '')) {
          res.writeHead(415).end();
          received.errors.push(`content-type ${req.headers['content-type']}`);
          return;
        }
        received.requests.push(JSON.parse(body));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
        return;
      }
      res.writeHead(404).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const received = { requests: [], errors: [] };
  const server = await startReceiver(received);
  const endpoint = `http://127.0.0.1:${server.address().port}`;
  const openlit = require('openlit').default;
  openlit.init({
    applicationName: 'otelitl-capture',
    environment: 'capture',
    otlpEndpoint: endpoint,
    disableBatch: true, // a SimpleSpanProcessor: each span is posted when it ends
    disableMetrics: true, // metrics and log events are not spans: left out
    disableEvents: true,
    pricingJson: {}, // else it fetches a pricing table from the internet
  });
  const { OpenAI } = require('openai');
  const fetches = [];
  const client = new OpenAI({ baseURL: `${common.fakellmURL()}/v1`, apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) });
  const { wallMinusPerf, request } = await captureChat(client, model, fetches);
  const sdkProvider = api.trace.getTracerProvider().getDelegate();
  await sdkProvider.forceFlush();
  await sdkProvider.shutdown();
  server.close();
  if (received.errors.length > 0) throw new Error(`receiver: ${received.errors.join('; ')}`);
  await common.writeFixtures({
    scenario,
    instrumentation: 'openlit (OpenLIT JS SDK, openai instrumentation)',
    packages: common.packageVersions(['openlit', 'openai', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http']),
    model,
    otlpRequests: received.requests,
    wallMinusPerf,
    requests: [request],
    notes: `${CHAT_NOTES} openlit.init with otlpEndpoint (a receiver in the capture process), disableBatch, disableMetrics, disableEvents, pricingJson {}; the fixture is what OpenLIT's own OTLP/HTTP JSON exporter posted, merged into one request.`,
  });
}

main().catch((e) => { console.error(e); process.exit(1); });

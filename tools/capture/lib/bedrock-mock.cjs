'use strict';
// A small Bedrock Runtime endpoint for the bedrock-* scenarios: fakellm speaks OpenAI, Anthropic
// and Gemini over SSE, not Bedrock's AWS event stream (application/vnd.amazon.eventstream, binary
// messages with a prelude CRC and a message CRC). It runs in the scenario's process on a free
// loopback port, answers
//
//   POST /model/{modelId}/converse-stream                 ConverseStream
//   POST /model/{modelId}/invoke-with-response-stream     InvokeModelWithResponseStream (an
//                                                          Anthropic Messages stream, as Claude
//                                                          models send on Bedrock)
//   GET  /async-invoke                                     ListAsyncInvokes (an empty list: an AWS
//                                                          call that is no model call)
//
// over HTTP/2 without TLS (prior knowledge, h2c): the Bedrock Runtime client sends every call with
// its NodeHttp2Handler, and to an http:// endpoint it speaks h2c. It notes for every request when
// it arrived, when the headers went out and when each content event was written, on the truth
// clock of lib/common.cjs (the same process, so the same clock).
// The messages are encoded by @smithy/core's EventStreamCodec, the codec the AWS SDK itself
// decodes them with. It checks no signature: any static credentials do.
//
// Cadence (like fakellm's): the headers and the first event (messageStart / message_start) at
// once, then a prefill of PREFILL_MS, then one content event per token, GAPS_MS apart in turn
// (20 to 40 ms), then the closing events and the usage.

const http2 = require('node:http2');
const { EventStreamCodec } = require('@smithy/core/event-streams');
const common = require('./common.cjs');

const PREFILL_MS = 150;
const GAPS_MS = [20, 32, 24, 40, 28, 36, 22, 30];
const INPUT_TOKENS = 10;
const WORDS = ['Hello', ' there', '!', ' How', ' can', ' I', ' help', ' you', ' today', '?'];

const codec = new EventStreamCodec((b) => new TextDecoder().decode(b), (s) => new TextEncoder().encode(s));

function eventMessage(eventType, payload) {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: new TextEncoder().encode(JSON.stringify(payload)),
  });
}

// An InvokeModelWithResponseStream event: a PayloadPart whose bytes (base64 in the JSON) are one
// event of the model's own stream format.
function chunkMessage(modelEvent) {
  return eventMessage('chunk', { bytes: Buffer.from(JSON.stringify(modelEvent)).toString('base64') });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function maxTokensOf(path, body) {
  try {
    const b = JSON.parse(body || '{}');
    if (path.endsWith('/converse-stream')) return (b.inferenceConfig && b.inferenceConfig.maxTokens) || 20;
    return b.max_tokens || 20;
  } catch {
    return 20;
  }
}

// converseEvents / claudeEvents return [first, contents (one per token), closing] event messages.
function converseEvents(n) {
  const contents = [];
  for (let i = 0; i < n; i++) contents.push(eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: WORDS[i % WORDS.length] } }));
  return {
    first: [eventMessage('messageStart', { role: 'assistant' })],
    contents,
    closing: (latencyMs) => [
      eventMessage('contentBlockStop', { contentBlockIndex: 0 }),
      eventMessage('messageStop', { stopReason: 'max_tokens' }),
      eventMessage('metadata', { usage: { inputTokens: INPUT_TOKENS, outputTokens: n, totalTokens: INPUT_TOKENS + n }, metrics: { latencyMs } }),
    ],
  };
}

function claudeEvents(n, model, firstByteMs) {
  const contents = [];
  for (let i = 0; i < n; i++) contents.push(chunkMessage({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: WORDS[i % WORDS.length] } }));
  return {
    first: [
      // As Anthropic's Messages stream has it: message_start carries the input tokens and an
      // output count of 1; the final count comes in message_delta's usage.
      chunkMessage({ type: 'message_start', message: { id: 'msg_bdrk_capture', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: INPUT_TOKENS, output_tokens: 1 } } }),
      chunkMessage({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ],
    contents,
    closing: (latencyMs) => [
      chunkMessage({ type: 'content_block_stop', index: 0 }),
      chunkMessage({ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: n } }),
      chunkMessage({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: INPUT_TOKENS, outputTokenCount: n, invocationLatency: latencyMs, firstByteLatency: firstByteMs() } }),
    ],
  };
}

// startBedrockMock listens on 127.0.0.1 (a free port) and resolves to {url, requests, close}.
// requests: one entry per request, in order: {id, method, path, model, arrived_unix_nano,
// headers_unix_nano, content_unix_nano: [...]} (strings of integer unix ns).
function startBedrockMock() {
  const requests = [];
  const sessions = new Set();
  const server = http2.createServer((req, res) => {
    const arrived = common.nowUnixNano();
    const arrivedMs = performance.now();
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', async () => {
      const entry = { id: requests.length + 1, method: req.method, path: req.url, model: null, arrived_unix_nano: arrived, headers_unix_nano: null, content_unix_nano: [] };
      requests.push(entry);
      const rid = `capture-${entry.id}`;
      const m = /^\/model\/([^/]+)\/(converse-stream|invoke-with-response-stream)$/.exec(req.url.split('?')[0]);
      if (req.method === 'GET' && req.url.split('?')[0] === '/async-invoke') {
        const out = JSON.stringify({ asyncInvokeSummaries: [] });
        res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': rid, 'content-length': Buffer.byteLength(out) });
        entry.headers_unix_nano = common.nowUnixNano();
        res.end(out);
        return;
      }
      if (req.method !== 'POST' || !m) {
        const out = JSON.stringify({ message: `bedrock-mock: no route for ${req.method} ${req.url}` });
        res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-requestid': rid, 'x-amzn-errortype': 'ResourceNotFoundException' });
        res.end(out);
        return;
      }
      const model = decodeURIComponent(m[1]);
      entry.model = model;
      const n = maxTokensOf(req.url, body);
      let firstContentMs = null;
      const ev = m[2] === 'converse-stream' ? converseEvents(n) : claudeEvents(n, model, () => Math.round(firstContentMs - arrivedMs));
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': rid, 'x-amzn-bedrock-content-type': 'application/json' });
      for (const f of ev.first) res.write(f);
      entry.headers_unix_nano = common.nowUnixNano();
      await sleep(PREFILL_MS);
      for (let i = 0; i < ev.contents.length; i++) {
        if (i > 0) await sleep(GAPS_MS[i % GAPS_MS.length]);
        res.write(ev.contents[i]);
        if (firstContentMs === null) firstContentMs = performance.now();
        entry.content_unix_nano.push(common.nowUnixNano());
      }
      for (const c of ev.closing(Math.round(performance.now() - arrivedMs))) res.write(c);
      res.end();
    });
  });
  server.on('session', (s) => { sessions.add(s); s.on('close', () => sessions.delete(s)); });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () => new Promise((r) => { server.close(() => r()); for (const s of sessions) s.close(); }),
      });
    });
  });
}

module.exports = { startBedrockMock, PREFILL_MS, GAPS_MS, INPUT_TOKENS };

// bedrock-converse: the official OpenTelemetry JS AWS SDK instrumentation
// (@opentelemetry/instrumentation-aws-sdk, opentelemetry-js-contrib; the one AWS's Distro for
// OpenTelemetry JS ships), registered before @aws-sdk/client-bedrock-runtime is required, around a
// ConverseStream call of the Bedrock Runtime client, then one ListAsyncInvokes call (an AWS call
// that is no model call). Run as bedrock-invoke (bedrock-invoke.cjs): InvokeModelWithResponseStream
// of a Claude model instead. Bedrock is lib/bedrock-mock.cjs on loopback (fakellm speaks no
// Bedrock). The instrumentation needs @opentelemetry/api 1.10, so it lives in the npm workspace
// aws-sdk/ (see README.md, Package versions).
const path = require('node:path');
const common = require('../lib/common.cjs');
const { startBedrockMock, PREFILL_MS, GAPS_MS } = require('../lib/bedrock-mock.cjs');

const scenario = process.env.CAPTURE_SCENARIO || 'bedrock-converse';
const invoke = scenario === 'bedrock-invoke';
// InvokeModel's request and response bodies are the model's own format, which the instrumentation
// picks by the model id (modelId.includes('anthropic.claude')); Converse's model id is free.
const model = invoke ? 'anthropic.claude-cap-bedrock-invoke' : `cap-${scenario}`;

function workspaceVersion(name) {
  return require(path.join(__dirname, '..', 'aws-sdk', 'node_modules', name, 'package.json')).version;
}

async function converse(client, cmd, maxTokens) {
  const timing = new common.Timing();
  const out = await client.send(new cmd.ConverseStreamCommand({
    modelId: model,
    messages: [{ role: 'user', content: [{ text: 'Say hello.' }] }],
    inferenceConfig: { maxTokens },
  }));
  let usage = null;
  for await (const ev of out.stream) {
    if (ev.contentBlockDelta && ev.contentBlockDelta.delta && ev.contentBlockDelta.delta.text) timing.chunk();
    if (ev.metadata && ev.metadata.usage) usage = ev.metadata.usage;
  }
  timing.finish();
  return { timing, outputTokens: usage ? usage.outputTokens : null };
}

async function invokeClaude(client, cmd, maxTokens) {
  const timing = new common.Timing();
  const out = await client.send(new cmd.InvokeModelWithResponseStreamCommand({
    modelId: model,
    contentType: 'application/json',
    accept: 'application/json',
    body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: maxTokens, messages: [{ role: 'user', content: 'Say hello.' }] }),
  }));
  let outputTokens = null;
  for await (const part of out.body) {
    if (!part.chunk || !part.chunk.bytes) continue;
    const ev = JSON.parse(Buffer.from(part.chunk.bytes).toString('utf8'));
    if (ev.type === 'content_block_delta' && ev.delta && ev.delta.text) timing.chunk();
    if (ev.type === 'message_delta' && ev.usage) outputTokens = ev.usage.output_tokens;
  }
  timing.finish();
  return { timing, outputTokens };
}

async function main() {
  const mock = await startBedrockMock();
  const { provider, exporter } = common.setupTracing(scenario);
  const { AwsInstrumentation, registerInstrumentations } = require('otelitl-capture-aws-sdk');
  registerInstrumentations({ tracerProvider: provider, instrumentations: [new AwsInstrumentation()] });
  const cmd = require('@aws-sdk/client-bedrock-runtime');
  const client = new cmd.BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint: mock.url,
    // Static dummies: the mock checks no signature. They must never be real keys.
    credentials: { accessKeyId: 'AKIDCAPTUREDUMMY', secretAccessKey: common.DUMMY_API_KEY },
  });
  const call = invoke ? invokeClaude : converse;
  await common.warmup(() => call(client, cmd, 5));
  const seen = mock.requests.length;
  const wallMinusPerf = common.wallMinusPerfMs();
  const r = await call(client, cmd, 20);
  if (!invoke) await client.send(new cmd.ListAsyncInvokesCommand({}));
  const mine = mock.requests.slice(seen);
  if (mine.length !== (invoke ? 1 : 2)) throw new Error(`expected ${invoke ? 1 : 2} requests at the mock, saw ${mine.length}`);
  const m = mine[0];
  await common.writeFixtures({
    scenario,
    instrumentation: '@opentelemetry/instrumentation-aws-sdk (opentelemetry-js-contrib), Bedrock Runtime extension',
    packages: {
      '@opentelemetry/instrumentation-aws-sdk': workspaceVersion('@opentelemetry/instrumentation-aws-sdk'),
      '@opentelemetry/api (its tree)': workspaceVersion('@opentelemetry/api'),
      ...common.packageVersions(['@aws-sdk/client-bedrock-runtime', '@opentelemetry/sdk-trace-base']),
    },
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [{
      timing: r.timing,
      // No fetch (the AWS SDK sends with node:http2) and no fakellm: the mock's times stand in for
      // fakellm's arrivals (when it wrote each content event).
      fetch: null,
      arrivals: m.content_unix_nano,
      outputTokens: r.outputTokens,
      extra: {
        mock_arrived_unix_nano: BigInt(m.arrived_unix_nano),
        mock_headers_unix_nano: BigInt(m.headers_unix_nano),
      },
    }],
    notes: `${invoke
      ? 'BedrockRuntimeClient.send(InvokeModelWithResponseStreamCommand) for a Claude model (Anthropic Messages body, max_tokens 20, prompt "Say hello."). chunk_unix_nano: every content_block_delta with text, when the application\'s loop over out.body decoded it.'
      : 'BedrockRuntimeClient.send(ConverseStreamCommand) with inferenceConfig.maxTokens 20, prompt "Say hello.", then one ListAsyncInvokesCommand (no model call; its span is in the fixture, its request is not in requests). chunk_unix_nano: every contentBlockDelta with text, when the application\'s loop over out.stream got it.'} AwsInstrumentation with its default config, registered with registerInstrumentations. Bedrock is lib/bedrock-mock.cjs in the same process (static dummy credentials, region us-east-1): the headers and the first event (${invoke ? 'message_start, content_block_start' : 'messageStart'}) at once, a ${PREFILL_MS} ms prefill, then one content event per token, ${Math.min(...GAPS_MS)}-${Math.max(...GAPS_MS)} ms apart, then the closing events with the usage. No fakellm: fakellm_request_id is null, fakellm_arrivals_unix_nano are when the MOCK wrote each content event, fetch_start_unix_nano and response_headers_unix_nano are null (the SDK sends with node:http2, not fetch); mock_arrived_unix_nano and mock_headers_unix_nano are when the mock got the request and wrote the headers with the first event (same clock).`,
  });
  await mock.close();
}

main().catch((e) => { console.error(e); process.exit(1); });

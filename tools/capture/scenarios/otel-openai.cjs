// otel-openai: the official OpenTelemetry JS OpenAI instrumentation
// (@opentelemetry/instrumentation-openai, opentelemetry-js-contrib), registered before openai is
// required, around a streamed Chat Completions call of the openai package with
// stream_options.include_usage; run as otel-openai-nousage (otel-openai-nousage.cjs), without it.
// It needs @opentelemetry/api 1.10 (the tree pins 1.9.1), so it lives in the npm workspace
// otel-contrib/ with a tree of its own (see README.md, Package versions).
const common = require('../lib/common.cjs');
const { captureChat, CHAT_NOTES } = require('../lib/openai-chat.cjs');

const scenario = process.env.CAPTURE_SCENARIO || 'otel-openai';
const model = `cap-${scenario}`;
// The installed version in the workspace's own tree.
function contribVersion(name) {
  const path = require('node:path');
  return require(path.join(__dirname, '..', 'otel-contrib', 'node_modules', name, 'package.json')).version;
}

const includeUsage = scenario !== 'otel-openai-nousage';

async function main() {
  const { provider, exporter } = common.setupTracing(scenario);
  // registerInstrumentations, as its README's NodeSDK does: it also hands the instrumentation a
  // meter provider. (Constructed and enabled alone, 0.22.0 fails on the first stream: its class
  // fields reset the histograms the base constructor made, and only setMeterProvider remakes them.)
  const { OpenAIInstrumentation, registerInstrumentations } = require('otelitl-capture-otel-contrib');
  registerInstrumentations({ tracerProvider: provider, instrumentations: [new OpenAIInstrumentation()] });
  const { OpenAI } = require('openai');
  const fetches = [];
  const client = new OpenAI({ baseURL: `${common.fakellmURL()}/v1`, apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) });
  const { wallMinusPerf, request } = await captureChat(client, model, fetches, includeUsage);
  await common.writeFixtures({
    scenario,
    instrumentation: '@opentelemetry/instrumentation-openai (opentelemetry-js-contrib)',
    packages: { '@opentelemetry/instrumentation-openai': contribVersion('@opentelemetry/instrumentation-openai'), '@opentelemetry/api (its tree)': contribVersion('@opentelemetry/api'), ...common.packageVersions(['openai', '@opentelemetry/sdk-trace-base']) },
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [request],
    notes: includeUsage
      ? `${CHAT_NOTES} OpenAIInstrumentation with its default config (captureMessageContent off; no logger provider is registered, so its log events go nowhere).`
      : `${CHAT_NOTES.replace('stream_options.include_usage, ', 'NO stream_options (so no usage chunk, output_tokens null), ').replace(', and a last one with the usage', '')} OpenAIInstrumentation with its default config (captureMessageContent off; no logger provider is registered, so its log events go nowhere).`,
  });
}

main().catch((e) => { console.error(e); process.exit(1); });

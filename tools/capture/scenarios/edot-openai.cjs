// edot-openai: Elastic's EDOT OpenAI instrumentation (@elastic/opentelemetry-instrumentation-openai),
// registered before openai is required, around a streamed Chat Completions call of the openai
// package with stream_options.include_usage; run as edot-openai-nousage (edot-openai-nousage.cjs),
// without it. 0.5.1 hooks openai >=4.19.0 <5 only, so the openai it instruments is the one of the
// npm workspace edot/ (4.104.0; the tree's is 6.49.0, see README.md, Package versions).
const common = require('../lib/common.cjs');
const { captureChat, CHAT_NOTES } = require('../lib/openai-chat.cjs');

const scenario = process.env.CAPTURE_SCENARIO || 'edot-openai';
const model = `cap-${scenario}`;
const includeUsage = scenario !== 'edot-openai-nousage';

async function main() {
  const { provider, exporter } = common.setupTracing(scenario);
  const edot = require('otelitl-capture-edot');
  const instrumentation = new edot.OpenAIInstrumentation();
  instrumentation.setTracerProvider(provider);
  instrumentation.enable();
  const { OpenAI } = edot.requireOpenAI();
  const fetches = [];
  const client = new OpenAI({ baseURL: `${common.fakellmURL()}/v1`, apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) });
  const { wallMinusPerf, request } = await captureChat(client, model, fetches, includeUsage);
  const notes = includeUsage
    ? CHAT_NOTES
    : CHAT_NOTES.replace('stream_options.include_usage, ', 'NO stream_options (so no usage chunk, output_tokens null), ').replace(', and a last one with the usage', '');
  await common.writeFixtures({
    scenario,
    instrumentation: '@elastic/opentelemetry-instrumentation-openai (Elastic EDOT)',
    packages: { '@elastic/opentelemetry-instrumentation-openai': common.packageVersion('@elastic/opentelemetry-instrumentation-openai'), 'openai (its workspace)': edot.version('openai'), ...common.packageVersions(['@opentelemetry/sdk-trace-base']) },
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [request],
    notes: `${notes} OpenAIInstrumentation with its default config (captureMessageContent off; no logger provider is registered, so its log events go nowhere).`,
  });
}

main().catch((e) => { console.error(e); process.exit(1); });

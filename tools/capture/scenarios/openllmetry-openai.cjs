// openllmetry-openai: OpenLLMetry's @traceloop/instrumentation-openai (registered as an
// OpenTelemetry instrumentation before openai is required) around a streamed Chat Completions
// call of the openai package.
const common = require('../lib/common.cjs');
const { captureChat, CHAT_NOTES } = require('../lib/openai-chat.cjs');

const scenario = 'openllmetry-openai';
const model = 'cap-openllmetry';

async function main() {
  const { provider, exporter } = common.setupTracing(scenario);
  const { OpenAIInstrumentation } = require('@traceloop/instrumentation-openai');
  const instrumentation = new OpenAIInstrumentation({ exceptionLogger: (e) => console.error('instrumentation exception:', e) });
  instrumentation.setTracerProvider(provider);
  instrumentation.enable();
  const { OpenAI } = require('openai');
  const fetches = [];
  const client = new OpenAI({ baseURL: `${common.fakellmURL()}/v1`, apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) });
  const { wallMinusPerf, request } = await captureChat(client, model, fetches);
  await common.writeFixtures({
    scenario,
    instrumentation: '@traceloop/instrumentation-openai (OpenLLMetry JS)',
    packages: common.packageVersions(['@traceloop/instrumentation-openai', '@traceloop/ai-semantic-conventions', 'openai', '@opentelemetry/sdk-trace-base']),
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [request],
    notes: `${CHAT_NOTES} OpenAIInstrumentation with its default config (enrichTokens off, traceContent on), plus an exceptionLogger that prints to stderr.`,
  });
}

main().catch((e) => { console.error(e); process.exit(1); });

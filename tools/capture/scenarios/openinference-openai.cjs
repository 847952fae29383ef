// openinference-openai: OpenInference's @arizeai/openinference-instrumentation-openai (registered
// as an OpenTelemetry instrumentation before openai is required) around a streamed Chat
// Completions call of the openai package.
const common = require('../lib/common.cjs');
const { captureChat, CHAT_NOTES } = require('../lib/openai-chat.cjs');

const scenario = 'openinference-openai';
const model = 'cap-openinference';

async function main() {
  const { provider, exporter } = common.setupTracing(scenario);
  const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');
  const instrumentation = new OpenAIInstrumentation({ tracerProvider: provider });
  instrumentation.enable();
  const { OpenAI } = require('openai');
  const fetches = [];
  const client = new OpenAI({ baseURL: `${common.fakellmURL()}/v1`, apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) });
  const { wallMinusPerf, request } = await captureChat(client, model, fetches);
  // The instrumentation ends its span from a tee'd copy of the stream, on its own schedule:
  // give it a moment after the application's loop has finished.
  await new Promise((r) => setTimeout(r, 200));
  await common.writeFixtures({
    scenario,
    instrumentation: '@arizeai/openinference-instrumentation-openai (OpenInference JS)',
    packages: common.packageVersions(['@arizeai/openinference-instrumentation-openai', '@arizeai/openinference-core', '@arizeai/openinference-semantic-conventions', 'openai', '@opentelemetry/sdk-trace-base']),
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [request],
    notes: `${CHAT_NOTES} OpenAIInstrumentation with its default config.`,
  });
}

main().catch((e) => { console.error(e); process.exit(1); });

// langfuse-openai: Langfuse's @langfuse/openai observeOpenAI wrapper (spans made by
// @langfuse/tracing on the global OpenTelemetry tracer provider) around a streamed Chat
// Completions call of the openai package. No Langfuse server: the spans go to the in-memory
// exporter of a plain OpenTelemetry SDK provider instead of Langfuse's LangfuseSpanProcessor.
const common = require('../lib/common.cjs');
const { captureChat, CHAT_NOTES } = require('../lib/openai-chat.cjs');

const scenario = 'langfuse-openai';
const model = 'cap-langfuse';

async function main() {
  const { provider, exporter } = common.setupTracing(scenario);
  const { observeOpenAI } = require('@langfuse/openai');
  const { OpenAI } = require('openai');
  const fetches = [];
  const client = observeOpenAI(new OpenAI({ baseURL: `${common.fakellmURL()}/v1`, apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) }));
  const { wallMinusPerf, request } = await captureChat(client, model, fetches);
  await common.writeFixtures({
    scenario,
    instrumentation: '@langfuse/openai observeOpenAI (@langfuse/tracing)',
    packages: common.packageVersions(['@langfuse/openai', '@langfuse/tracing', '@langfuse/core', 'openai', '@opentelemetry/sdk-trace-base']),
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [request],
    notes: `${CHAT_NOTES} observeOpenAI(new OpenAI(...)) with no config; @langfuse/otel's LangfuseSpanProcessor is not used (it would export to a Langfuse server): the spans are those @langfuse/tracing makes on the global tracer provider.`,
  });
}

main().catch((e) => { console.error(e); process.exit(1); });

// openllmetry-anthropic: OpenLLMetry's @traceloop/instrumentation-anthropic (registered as an
// OpenTelemetry instrumentation before @anthropic-ai/sdk is required) around a streamed Messages
// call of the Anthropic SDK against fakellm's Anthropic API (POST /v1/messages).
const common = require('../lib/common.cjs');
const { streamMessages } = require('../lib/anthropic-messages.cjs');

const scenario = 'openllmetry-anthropic';
const model = 'cap-openllmetry-anthropic';

async function main() {
  const { provider, exporter } = common.setupTracing(scenario);
  const { AnthropicInstrumentation } = require('@traceloop/instrumentation-anthropic');
  const instrumentation = new AnthropicInstrumentation({ exceptionLogger: (e) => console.error('instrumentation exception:', e) });
  instrumentation.setTracerProvider(provider);
  instrumentation.enable();
  const Anthropic = require('@anthropic-ai/sdk').default;
  const fetches = [];
  // The server's root, without /v1: the SDK adds /v1/messages.
  const client = new Anthropic({ baseURL: common.fakellmURL(), apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) });
  await common.warmup(() => streamMessages(client, model, 5));
  fetches.length = 0;
  const wallMinusPerf = common.wallMinusPerfMs();
  const { timing, outputTokens } = await streamMessages(client, model, 20);
  if (fetches.length !== 1) throw new Error(`expected one request, saw ${fetches.length}`);
  await common.writeFixtures({
    scenario,
    instrumentation: '@traceloop/instrumentation-anthropic (OpenLLMetry JS)',
    packages: common.packageVersions(['@traceloop/instrumentation-anthropic', '@traceloop/ai-semantic-conventions', '@anthropic-ai/sdk', '@opentelemetry/sdk-trace-base']),
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [{ timing, fetch: fetches[0], outputTokens }],
    notes: 'Anthropic client.messages.create with stream: true, max_tokens 20, prompt "Say hello.", against fakellm\'s Anthropic Messages API. chunk_unix_nano: every content_block_delta whose text_delta is non-empty, when the application\'s for-await loop received it; output_tokens: the message_delta event\'s usage. AnthropicInstrumentation with its default config (traceContent on), plus an exceptionLogger that prints to stderr.',
  });
}

main().catch((e) => { console.error(e); process.exit(1); });

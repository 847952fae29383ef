// openinference-anthropic: OpenInference's @arizeai/openinference-instrumentation-anthropic (registered
// as an OpenTelemetry instrumentation before @anthropic-ai/sdk is required) around a streamed
// Messages call, client.messages.create({stream: true}), against fakellm's Anthropic API
// (POST /v1/messages).
//
// The instrumentation wraps Messages.prototype.create (dist/src/instrumentation.js, patchCreate):
// one span "Anthropic Messages" per call, started before the request; for a stream it tee()s the
// stream and ends the span when its copy is drained (consumeAnthropicStreamChunks), with the usage
// of message_start and message_delta.
//
// @anthropic-ai/sdk traces itself since 0.134.0 (internal/tracing.js: a CLIENT span
// "anthropic.messages.create", scope com.anthropic.sdk.typescript, with gen_ai.operation.name chat,
// usage and gen_ai.response.time_to_first_chunk), on by default whenever a global tracer provider
// is registered: under the OpenInference span it is a second span for the same request. The
// client here is made with openTelemetry: false (its documented switch, as
// ANTHROPIC_OPEN_TELEMETRY=false), so that the fixture holds OpenInference's span alone.
const common = require('../lib/common.cjs');
const { streamMessages } = require('../lib/anthropic-messages.cjs');

const scenario = 'openinference-anthropic';
const model = 'cap-openinference-anthropic';

async function main() {
  const { provider, exporter } = common.setupTracing(scenario);
  const { AnthropicInstrumentation } = require('@arizeai/openinference-instrumentation-anthropic');
  const instrumentation = new AnthropicInstrumentation({ tracerProvider: provider });
  instrumentation.enable();
  const Anthropic = require('@anthropic-ai/sdk');
  const fetches = [];
  const client = new Anthropic({ baseURL: common.fakellmURL(), apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches), openTelemetry: false });

  await common.warmup(() => streamMessages(client, model, 5));
  await new Promise((r) => setTimeout(r, 200));
  await provider.forceFlush();
  exporter.reset();
  fetches.length = 0;

  const wallMinusPerf = common.wallMinusPerfMs();
  const { timing, outputTokens } = await streamMessages(client, model, 20);
  if (fetches.length !== 1) throw new Error(`expected one request, saw ${fetches.length}`);
  // The instrumentation ends its span from a tee'd copy of the stream, on its own schedule: give
  // it a moment after the application's loop has finished.
  await new Promise((r) => setTimeout(r, 200));
  await common.writeFixtures({
    scenario,
    instrumentation: '@arizeai/openinference-instrumentation-anthropic (OpenInference JS)',
    packages: common.packageVersions(['@arizeai/openinference-instrumentation-anthropic', '@arizeai/openinference-core', '@arizeai/openinference-semantic-conventions', '@anthropic-ai/sdk', '@opentelemetry/sdk-trace-base']),
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [{ timing, fetch: fetches[0], outputTokens }],
    notes: 'AnthropicInstrumentation with its default config; @anthropic-ai/sdk client (openTelemetry: false: the SDK\'s own span is off) .messages.create with stream: true, max_tokens 20, prompt "Say hello.", baseURL fakellm (POST /v1/messages). chunk_unix_nano: every content_block_delta whose text_delta is non-empty, when the application\'s for-await loop received it. output_tokens: message_delta\'s usage.output_tokens. fakellm sends message_start (usage input_tokens, output_tokens 1) and content_block_start at once, before prefill; response_headers_unix_nano is about when they came.',
  });
}

main().catch((e) => { console.error(e); process.exit(1); });

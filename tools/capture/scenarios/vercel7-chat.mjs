// vercel7-chat: AI SDK 7 streamText with the @ai-sdk/otel OpenTelemetry integration registered
// globally (registerTelemetry), provider @ai-sdk/openai (Chat Completions) pointed at fakellm.
import common from '../lib/common.cjs';
import { registerTelemetry, streamText } from 'ai';
import { OpenTelemetry } from '@ai-sdk/otel';
import { createOpenAI } from '@ai-sdk/openai';

const scenario = 'vercel7-chat';
const model = 'cap-vercel7-chat';
const { provider, exporter } = common.setupTracing(scenario);
registerTelemetry(new OpenTelemetry());

const fetches = [];
const openai = createOpenAI({ baseURL: `${common.fakellmURL()}/v1`, apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) });

await common.warmup(async () => {
  const warm = streamText({ model: openai.chat(model), prompt: 'Say hello.', maxOutputTokens: 5 });
  for await (const _ of warm.textStream);
});
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const timing = new common.Timing();
const result = streamText({ model: openai.chat(model), prompt: 'Say hello.', maxOutputTokens: 20 });
for await (const delta of result.textStream) {
  if (delta.length > 0) timing.chunk();
}
timing.finish();
const usage = await result.usage;

await common.writeFixtures({
  scenario,
  instrumentation: '@ai-sdk/otel OpenTelemetry (ai 7)',
  packages: common.packageVersions(['ai', '@ai-sdk/otel', '@ai-sdk/openai', '@opentelemetry/sdk-trace-base']),
  model,
  provider,
  exporter,
  wallMinusPerf,
  requests: [{ timing, fetch: fetches[0], outputTokens: usage.outputTokens }],
  notes: 'streamText over Chat Completions (stream_options.include_usage); telemetry by registerTelemetry(new OpenTelemetry()). chunk_unix_nano: every non-empty textStream delta.',
});

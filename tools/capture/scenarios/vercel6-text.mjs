// vercel6-text: AI SDK 6 (npm alias ai6 = ai@6) streamText with experimental_telemetry enabled,
// provider @ai-sdk/openai@3 (alias ai-sdk-openai3, Chat Completions) pointed at fakellm.
import common from '../lib/common.cjs';
import { streamText } from 'ai6';
import { createOpenAI } from 'ai-sdk-openai3';

const scenario = 'vercel6-text';
const model = 'cap-vercel6-text';
const { provider, exporter } = common.setupTracing(scenario);

const fetches = [];
const openai = createOpenAI({ baseURL: `${common.fakellmURL()}/v1`, apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) });

// The warm-up runs without telemetry: AI SDK 6 only traces when experimental_telemetry is on.
const warm = streamText({ model: openai.chat(model), prompt: 'Say hello.', maxOutputTokens: 5 });
for await (const _ of warm.textStream);
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const timing = new common.Timing();
const result = streamText({
  model: openai.chat(model),
  prompt: 'Say hello.',
  maxOutputTokens: 20,
  experimental_telemetry: { isEnabled: true },
});
for await (const delta of result.textStream) {
  if (delta.length > 0) timing.chunk();
}
timing.finish();
const usage = await result.usage;

await common.writeFixtures({
  scenario,
  instrumentation: 'ai 6 experimental_telemetry',
  packages: common.packageVersions(['ai6', 'ai-sdk-openai3', '@opentelemetry/sdk-trace-base']),
  model,
  provider,
  exporter,
  wallMinusPerf,
  requests: [{ timing, fetch: fetches[0], outputTokens: usage.outputTokens }],
  notes: 'streamText over Chat Completions (stream_options.include_usage), experimental_telemetry: { isEnabled: true }. Package keys ai6 and ai-sdk-openai3 are npm aliases of ai@6 and @ai-sdk/openai@3. chunk_unix_nano: every non-empty textStream delta. fakellm sends its first SSE event (role, empty content) before prefill; response_headers_unix_nano is about when it arrived.',
});

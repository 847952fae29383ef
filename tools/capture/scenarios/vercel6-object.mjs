// vercel6-object: AI SDK 6 (npm alias ai6 = ai@6) streamObject with experimental_telemetry enabled,
// provider @ai-sdk/openai@3 (alias ai-sdk-openai3, Chat Completions) pointed at fakellm. fakellm
// streams plain words; lib/rewrite.cjs (jsonTextFetch) wraps them, event by event, into the JSON
// object {"text":"..."} the schema asks for.
import common from '../lib/common.cjs';
import rewrite from '../lib/rewrite.cjs';
import { streamObject } from 'ai6';
import { createOpenAI } from 'ai-sdk-openai3';
import { z } from 'zod';

const scenario = 'vercel6-object';
const model = 'cap-vercel6-object';
const { provider, exporter } = common.setupTracing(scenario);

const fetches = [];
const openai = createOpenAI({
  baseURL: `${common.fakellmURL()}/v1`,
  apiKey: common.DUMMY_API_KEY,
  fetch: rewrite.jsonTextFetch(common.recordingFetch(fetches)),
});
const schema = z.object({ text: z.string() });

const warm = streamObject({ model: openai.chat(model), schema, prompt: 'Say hello.', maxOutputTokens: 5 });
for await (const _ of warm.textStream);
await warm.object;
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const timing = new common.Timing();
const result = streamObject({
  model: openai.chat(model),
  schema,
  prompt: 'Say hello.',
  maxOutputTokens: 20,
  experimental_telemetry: { isEnabled: true },
});
for await (const delta of result.textStream) {
  if (delta.length > 0) timing.chunk();
}
timing.finish();
const usage = await result.usage;
await result.object;

await common.writeFixtures({
  scenario,
  instrumentation: 'ai 6 experimental_telemetry',
  packages: common.packageVersions(['ai6', 'ai-sdk-openai3', 'zod', '@opentelemetry/sdk-trace-base']),
  model,
  provider,
  exporter,
  wallMinusPerf,
  requests: [{ timing, fetch: fetches[0], outputTokens: usage.outputTokens }],
  notes: 'streamObject (schema {text: string}) over Chat Completions, experimental_telemetry: { isEnabled: true }. fakellm\'s words are wrapped client-side into {"text":"..."} (lib/rewrite.cjs): the first delta carries the opening {"text":" and one extra delta, "}, rides on the finish event, so chunk_unix_nano has one chunk more than fakellm_arrivals_unix_nano. chunk_unix_nano: every non-empty textStream delta (JSON text).',
});

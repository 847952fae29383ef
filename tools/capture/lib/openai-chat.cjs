'use strict';
// The one streamed Chat Completions call of the openai-package scenarios (OpenLLMetry,
// OpenInference, Langfuse, OpenLIT), with its client-side truth.

const common = require('./common.cjs');

// streamChat sends "Say hello." with stream and stream_options.include_usage (unless includeUsage
// is false: then no stream_options at all, and the stream reports no usage), and notes when each
// content chunk reached the application.
async function streamChat(client, model, maxTokens, includeUsage = true) {
  const timing = new common.Timing();
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Say hello.' }],
    stream: true,
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    max_tokens: maxTokens,
  });
  let usage = null;
  for await (const chunk of stream) {
    const content = chunk.choices && chunk.choices[0] && chunk.choices[0].delta && chunk.choices[0].delta.content;
    if (content) timing.chunk();
    if (chunk.usage) usage = chunk.usage;
  }
  timing.finish();
  return { timing, usage };
}

// captureChat runs a warm-up call with tracing suppressed, then the captured call, and returns the
// truth of the captured one.
async function captureChat(client, model, fetches, includeUsage = true) {
  await common.warmup(() => streamChat(client, model, 5, includeUsage));
  fetches.length = 0;
  const wallMinusPerf = common.wallMinusPerfMs();
  const { timing, usage } = await streamChat(client, model, 20, includeUsage);
  if (fetches.length !== 1) throw new Error(`expected one request, saw ${fetches.length}`);
  return { wallMinusPerf, request: { timing, fetch: fetches[0], outputTokens: usage ? usage.completion_tokens : null } };
}

const CHAT_NOTES = 'openai client.chat.completions.create with stream: true, stream_options.include_usage, max_tokens 20, prompt "Say hello.". chunk_unix_nano: every chunk whose delta.content is non-empty, when the application\'s for-await loop received it. fakellm sends a first SSE event (role, empty content) at once, before prefill, and a last one with the usage; response_headers_unix_nano is about when the first came.';

module.exports = { streamChat, captureChat, CHAT_NOTES };

'use strict';
// The one streamed Messages call of the Anthropic scenarios (OpenLLMetry, OpenInference), against
// fakellm's Anthropic API (POST /v1/messages), with its client-side truth.

const common = require('./common.cjs');

// streamMessages sends "Say hello." with stream: true and notes when each non-empty text delta
// reached the application; the output tokens are those of the message_delta event's usage.
async function streamMessages(client, model, maxTokens) {
  const timing = new common.Timing();
  const stream = await client.messages.create({
    model,
    max_tokens: maxTokens,
    messages: [{ role: 'user', content: 'Say hello.' }],
    stream: true,
  });
  let outputTokens = null;
  for await (const event of stream) {
    if (event.type === 'content_block_delta' && event.delta && event.delta.type === 'text_delta' && event.delta.text) timing.chunk();
    if (event.type === 'message_delta' && event.usage) outputTokens = event.usage.output_tokens;
  }
  timing.finish();
  return { timing, outputTokens };
}

module.exports = { streamMessages };

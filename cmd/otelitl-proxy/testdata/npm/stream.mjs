// Streams one chat completion through the proxy at OPENAI_BASE_URL and prints the text.
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: 'sk-e2e-secret', maxRetries: 0 });
const stream = await client.chat.completions.create({
  model: 'fake-gpt',
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  max_tokens: Number(process.env.MAX_TOKENS || 10),
  stream_options: { include_usage: true },
});
let text = '';
for await (const chunk of stream) {
  text += chunk.choices[0]?.delta?.content ?? '';
}
process.stdout.write(text);

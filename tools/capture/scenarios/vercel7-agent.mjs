// vercel7-agent: an AI SDK 7 ToolLoopAgent streamed (agent.stream) with the @ai-sdk/otel
// OpenTelemetry integration: invoke_agent > step N > chat, and execute_tool under step 1.
// Step 1's reply is turned into a tool call on the client (lib/rewrite.cjs: fakellm has no tool
// calls; its rhythm is kept), so the agent loops once: step 1 calls the tool, step 2 answers.
import common from '../lib/common.cjs';
import rewrite from '../lib/rewrite.cjs';
import { registerTelemetry, ToolLoopAgent, stepCountIs, tool } from 'ai';
import { OpenTelemetry } from '@ai-sdk/otel';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';

const scenario = 'vercel7-agent';
const model = 'cap-vercel7-agent';
const { provider, exporter } = common.setupTracing(scenario);
registerTelemetry(new OpenTelemetry());

const fetches = [];
const openai = createOpenAI({
  baseURL: `${common.fakellmURL()}/v1`,
  apiKey: common.DUMMY_API_KEY,
  fetch: rewrite.toolCallFetch(common.recordingFetch(fetches), 'count_words'),
});
const agent = new ToolLoopAgent({
  model: openai.chat(model),
  maxOutputTokens: 12,
  stopWhen: stepCountIs(3),
  tools: {
    count_words: tool({
      description: 'Counts the words of a text.',
      inputSchema: z.object({ text: z.string() }),
      execute: async ({ text }) => ({ words: text.trim().split(/\s+/).length }),
    }),
  },
});

async function run() {
  const steps = [];
  let cur = null;
  const result = await agent.stream({ prompt: 'Say hello.' });
  for await (const part of result.fullStream) {
    switch (part.type) {
      case 'start-step':
        cur = { timing: new common.Timing(), kinds: [] };
        steps.push(cur);
        break;
      case 'text-delta':
        if (part.text.length > 0) { cur.timing.chunk(); cur.kinds.push('text-delta'); }
        break;
      case 'tool-input-delta':
        if (part.delta.length > 0) { cur.timing.chunk(); cur.kinds.push('tool-input-delta'); }
        break;
      case 'finish-step':
        cur.timing.finish();
        cur.outputTokens = part.usage.outputTokens;
        cur.finishReason = part.finishReason;
        break;
      case 'error':
        throw part.error;
    }
  }
  return { steps, totalUsage: await result.totalUsage };
}

await common.warmup(run);
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const appStart = common.nowUnixNano();
const { steps, totalUsage } = await run();
const appEnd = common.nowUnixNano();
if (steps.length !== 2 || fetches.length !== 2) throw new Error(`expected 2 steps and 2 requests, got ${steps.length} and ${fetches.length}`);

await common.writeFixtures({
  scenario,
  instrumentation: '@ai-sdk/otel OpenTelemetry (ai 7), ToolLoopAgent',
  packages: common.packageVersions(['ai', '@ai-sdk/otel', '@ai-sdk/openai', 'zod', '@opentelemetry/sdk-trace-base']),
  model,
  provider,
  exporter,
  wallMinusPerf,
  // A step's start_unix_nano is when the SDK called fetch for it; the start-step part reaches the
  // application only later (start_step_part_unix_nano).
  requests: common.agentStepRequests(steps, fetches, 'start_step_part_unix_nano'),
  notes: `ToolLoopAgent.stream, stopWhen stepCountIs(3), tool count_words. Step 1's streamed text is rewritten on the client into a streamed tool call (lib/rewrite.cjs; same SSE events at the same times, content replaced), so step 1 counts tool-input deltas as chunks (one more than fakellm's arrivals: the closing "} rides on the finish event) and step 2 text deltas. A step's start_unix_nano is when the SDK called fetch; start_step_part_unix_nano is when its start-step part reached the application. The agent run: start ${appStart}, end ${appEnd} (unix ns); total usage: input ${totalUsage.inputTokens}, output ${totalUsage.outputTokens}.`,
});

// mastra-chat: see mastra-agent.mjs (the same program, run as mastra-chat: an agent without tools,
// one streamed call).
process.env.CAPTURE_SCENARIO = 'mastra-chat';
await import('./mastra-agent.mjs');

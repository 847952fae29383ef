// strands-chat: see strands-agent.mjs (the same program, run as strands-chat: an agent without
// tools, one streamed call).
process.env.CAPTURE_SCENARIO = 'strands-chat';
await import('./strands-agent.mjs');

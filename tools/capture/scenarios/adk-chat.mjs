// adk-chat: see adk-agent.mjs (the same program, run as adk-chat).
process.env.CAPTURE_SCENARIO = 'adk-chat';
await import('./adk-agent.mjs');

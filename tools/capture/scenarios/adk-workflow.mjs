// adk-workflow: see adk-agent.mjs (the same program, run as adk-workflow).
process.env.CAPTURE_SCENARIO = 'adk-workflow';
await import('./adk-agent.mjs');

// strands-graph: see strands-agent.mjs (the same program, run as strands-graph: the agent without
// tools as the one node of a Graph, one streamed call).
process.env.CAPTURE_SCENARIO = 'strands-graph';
await import('./strands-agent.mjs');

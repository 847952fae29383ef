// langsmith-agent: see langsmith-chain.mjs (the same program, run as langsmith-agent: a LangGraph
// ReAct agent with one tool call, then text).
process.env.CAPTURE_SCENARIO = 'langsmith-agent';
await import('./langsmith-chain.mjs');

// langsmith-llm: see langsmith-chain.mjs (the same program, run as langsmith-llm: the model alone
// inside the traceable, no chain).
process.env.CAPTURE_SCENARIO = 'langsmith-llm';
await import('./langsmith-chain.mjs');

// Re-exports what the strands-* scenarios use of @strands-agents/sdk, as installed in this
// workspace's own node_modules (see ../README.md, Package versions). Its peers (openai,
// @opentelemetry/api, zod) resolve to the parent tree's, so its tracer is the one the capture
// registers.
import fs from 'node:fs';

export { Agent, tool } from '@strands-agents/sdk';
export { OpenAIModel } from '@strands-agents/sdk/models/openai';
export { Graph } from '@strands-agents/sdk/multiagent';

// The package exports no ./package.json: read the installed manifest.
export const version = JSON.parse(fs.readFileSync(new URL('./node_modules/@strands-agents/sdk/package.json', import.meta.url), 'utf8')).version;

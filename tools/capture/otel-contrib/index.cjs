'use strict';
// Re-exports @opentelemetry/instrumentation-openai and registerInstrumentations as installed in
// this workspace's own node_modules, beside @opentelemetry/api 1.10.0, which they need (api 1.10
// added `logs`, which the instrumentation's base class reads in its constructor). See
// ../README.md, Package versions.
const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');

module.exports = { OpenAIInstrumentation, registerInstrumentations };

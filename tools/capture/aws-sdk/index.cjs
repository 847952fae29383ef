'use strict';
// Re-exports @opentelemetry/instrumentation-aws-sdk and registerInstrumentations as installed in
// this workspace's own node_modules, beside @opentelemetry/api 1.10.0, which they need
// (@opentelemetry/instrumentation 0.300.0 reads api 1.10's `logs` in its constructor). npm would
// hoist the instrumentation to the top tree, where api is 1.9.1: the top package.json's
// `overrides` entry makes it nest here. See ../README.md, Package versions.
const { AwsInstrumentation } = require('@opentelemetry/instrumentation-aws-sdk');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');

module.exports = { AwsInstrumentation, registerInstrumentations };

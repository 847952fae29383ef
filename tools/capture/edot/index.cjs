'use strict';
// Re-exports Elastic's EDOT OpenAI instrumentation and a way to load the openai package it hooks,
// both as installed in this workspace's own node_modules: 0.5.1 hooks openai >=4.19.0 <5 only
// (build/src/instrumentation.js), and the parent tree's openai is 6.49.0. See ../README.md,
// Package versions.
const { OpenAIInstrumentation } = require('@elastic/opentelemetry-instrumentation-openai');

// requireOpenAI loads this workspace's openai 4, after the instrumentation is enabled, so that its
// require hook sees the module load.
function requireOpenAI() {
  return require('openai');
}

function version(name) {
  const path = require('node:path');
  return require(path.join(__dirname, 'node_modules', name, 'package.json')).version;
}

module.exports = { OpenAIInstrumentation, requireOpenAI, version };

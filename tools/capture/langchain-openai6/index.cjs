'use strict';
// Re-exports ChatOpenAI of @langchain/openai 1.5.8, as installed in this workspace's own
// node_modules: the last release that depends on openai 6 (^6.41.0, the top tree's 6.49.0), which
// @traceloop/instrumentation-openai hooks. The top tree's @langchain/openai 1.6.0 brings openai 7.
// See ../README.md, Package versions.
const { ChatOpenAI } = require('@langchain/openai');

function version(name) {
  const path = require('node:path');
  return require(path.join(__dirname, 'node_modules', name, 'package.json')).version;
}

module.exports = { ChatOpenAI, version };

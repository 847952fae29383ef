// otel-openai-nousage: see otel-openai.cjs (the same program, run as otel-openai-nousage: the
// streamed call without stream_options, so no usage chunk).
process.env.CAPTURE_SCENARIO = 'otel-openai-nousage';
require('./otel-openai.cjs');

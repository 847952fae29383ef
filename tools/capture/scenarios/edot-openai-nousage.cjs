// edot-openai-nousage: see edot-openai.cjs (the same program, run as edot-openai-nousage: the
// streamed call without stream_options, so no usage chunk).
process.env.CAPTURE_SCENARIO = 'edot-openai-nousage';
require('./edot-openai.cjs');

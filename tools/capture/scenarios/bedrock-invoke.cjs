// bedrock-invoke: see bedrock-converse.cjs (the same program, run as bedrock-invoke: a Claude model's
// InvokeModelWithResponseStream instead of ConverseStream).
process.env.CAPTURE_SCENARIO = 'bedrock-invoke';
require('./bedrock-converse.cjs');

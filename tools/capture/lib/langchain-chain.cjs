'use strict';
// The chain the LangChain scenarios of OpenLLMetry and OpenInference stream: a prompt template,
// ChatOpenAI (streaming, 20 tokens, against fakellm) and a string parser, one request. Each
// scenario hands in its own LangChain classes: they come from different packages (the tree's
// @langchain/openai or the langchain-openai6 workspace's) and module systems.
const common = require('./common.cjs');

// chatChain returns the chain, its requests recorded in fetches.
function chatChain({ ChatOpenAI, ChatPromptTemplate, StringOutputParser }, model, fetches) {
  const llm = new ChatOpenAI({
    model,
    streaming: true,
    maxTokens: 20,
    apiKey: common.DUMMY_API_KEY,
    configuration: { baseURL: `${common.fakellmURL()}/v1`, fetch: common.recordingFetch(fetches) },
  });
  return ChatPromptTemplate.fromMessages([['human', '{question}']]).pipe(llm).pipe(new StringOutputParser());
}

// streamChain streams chain once (with options, such as callbacks) and notes when each non-empty
// string reached the application.
async function streamChain(chain, options) {
  const timing = new common.Timing();
  for await (const s of await chain.stream({ question: 'Say hello.' }, options)) {
    if (typeof s === 'string' && s.length > 0) timing.chunk();
  }
  timing.finish();
  return timing;
}

module.exports = { chatChain, streamChain };

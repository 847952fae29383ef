'use strict';
// fakellm answers every Gemini streamGenerateContent request with plain words: no function calls.
// adk-agent needs one, and gets it by rewriting fakellm's streamed reply on the client side, event
// by event and without delaying any, so the rhythm (when each SSE event arrives) stays fakellm's:
//
//   - functionCallFetch (adk-agent): the text parts stay as they are, and the last event (the one
//     with finishReason and the usage) carries, in place of its empty text part, one functionCall
//     part {name, args: {text: "<the text so far>"}}. The Gemini API streams a function call as a
//     whole part, never as argument deltas, and may send text before it in the same reply. A
//     request whose contents already hold a functionResponse (step 2 on) passes through untouched.

function hasFunctionResponse(init) {
  try {
    const body = JSON.parse(typeof init.body === 'string' ? init.body : new TextDecoder().decode(init.body));
    return (body.contents || []).some((c) => (c.parts || []).some((p) => p.functionResponse));
  } catch {
    return true; // not JSON we know: leave it alone
  }
}

function rewriteEvent(ev, state, toolName) {
  if (!ev.startsWith('data: ')) return ev;
  const resp = JSON.parse(ev.slice('data: '.length));
  const cand = resp.candidates && resp.candidates[0];
  if (!cand || !cand.content) return ev;
  for (const p of cand.content.parts || []) {
    if (typeof p.text === 'string') state.text += p.text;
  }
  if (cand.finishReason) {
    cand.content.parts = [{ functionCall: { name: toolName, args: { text: state.text } } }];
  }
  return 'data: ' + JSON.stringify(resp);
}

// fakellm separates SSE events with CRLF CRLF (as the Gemini API does).
function sseTransform(toolName) {
  const state = { text: '' };
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  let buf = '';
  return new TransformStream({
    transform(bytes, controller) {
      buf += dec.decode(bytes, { stream: true });
      let i;
      while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
        const sep = buf.slice(i).match(/^\r?\n\r?\n/)[0];
        const ev = buf.slice(0, i);
        buf = buf.slice(i + sep.length);
        controller.enqueue(enc.encode(rewriteEvent(ev, state, toolName) + sep));
      }
    },
    flush(controller) {
      if (buf) controller.enqueue(enc.encode(buf));
    },
  });
}

function functionCallFetch(inner, toolName) {
  return async (input, init) => {
    const res = await inner(input, init);
    if (hasFunctionResponse(init || {}) || !res.body) return res;
    return new Response(res.body.pipeThrough(sseTransform(toolName)), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

module.exports = { functionCallFetch };

'use strict';
// fakellm answers every Chat Completions request with plain words: no tool calls, no JSON. Two
// scenarios need more, and get it by rewriting fakellm's streamed reply on the client side, event
// by event and without delaying any, so the rhythm (when each SSE event arrives) stays fakellm's
// and only the content changes:
//
//   - toolCallFetch (vercel7-agent): the first step's reply becomes one streamed tool call. The
//     text deltas become the deltas of the call's JSON arguments, {"text":"<the text>"}, and the
//     finish reason becomes "tool_calls". A request whose messages already hold a tool result
//     (step 2 on) passes through untouched.
//   - jsonTextFetch (vercel6-object): the reply becomes the JSON object {"text":"<the text>"}: the
//     first text delta is prefixed with {"text":" and the finish event carries the closing "}.

const TOOL_CALL_ID = 'call_capture_1';

function hasToolResult(init) {
  try {
    const body = JSON.parse(typeof init.body === 'string' ? init.body : new TextDecoder().decode(init.body));
    return (body.messages || []).some((m) => m.role === 'tool');
  } catch {
    return true; // not JSON we know: leave it alone
  }
}

function rewriteEvent(ev, state, toolName) {
  if (!ev.startsWith('data: ')) return ev;
  const data = ev.slice('data: '.length);
  if (data === '[DONE]') return ev;
  const chunk = JSON.parse(data);
  const choice = chunk.choices && chunk.choices[0];
  if (!choice) return ev; // the usage chunk
  const delta = choice.delta || {};
  if (choice.finish_reason) {
    choice.finish_reason = 'tool_calls';
    choice.delta = { tool_calls: [{ index: 0, function: { arguments: '"}' } }] };
  } else if (delta.role === 'assistant' && !state.started) {
    state.started = true;
    choice.delta = { role: 'assistant', content: null, tool_calls: [{ index: 0, id: TOOL_CALL_ID, type: 'function', function: { name: toolName, arguments: '' } }] };
  } else if (typeof delta.content === 'string' && delta.content.length > 0) {
    const prefix = state.opened ? '' : '{"text":"';
    state.opened = true;
    // fakellm's words are plain lower-case ASCII; JSON.stringify escapes anything else.
    choice.delta = { tool_calls: [{ index: 0, function: { arguments: prefix + JSON.stringify(delta.content).slice(1, -1) } }] };
  }
  return 'data: ' + JSON.stringify(chunk);
}

function rewriteJSONEvent(ev, state) {
  if (!ev.startsWith('data: ')) return ev;
  const data = ev.slice('data: '.length);
  if (data === '[DONE]') return ev;
  const chunk = JSON.parse(data);
  const choice = chunk.choices && chunk.choices[0];
  if (!choice) return ev;
  const delta = choice.delta || {};
  if (choice.finish_reason) {
    choice.delta = { content: '"}' };
  } else if (typeof delta.content === 'string' && delta.content.length > 0) {
    const prefix = state.opened ? '' : '{"text":"';
    state.opened = true;
    choice.delta = { content: prefix + JSON.stringify(delta.content).slice(1, -1) };
  }
  return 'data: ' + JSON.stringify(chunk);
}

function sseTransform(rewrite) {
  const state = { started: false, opened: false };
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  let buf = '';
  return new TransformStream({
    transform(bytes, controller) {
      buf += dec.decode(bytes, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, i);
        buf = buf.slice(i + 2);
        controller.enqueue(enc.encode(rewrite(ev, state) + '\n\n'));
      }
    },
    flush(controller) {
      if (buf.length > 0) controller.enqueue(enc.encode(buf));
    },
  });
}

// toolCallFetch returns a fetch whose first-step streamed replies are turned into a call of tool
// toolName (see above).
function toolCallFetch(inner, toolName) {
  return async (input, init) => {
    const res = await inner(input, init);
    if (!init || hasToolResult(init) || !res.body) return res;
    const rewrite = (ev, state) => rewriteEvent(ev, state, toolName);
    return new Response(res.body.pipeThrough(sseTransform(rewrite)), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

// jsonTextFetch returns a fetch whose streamed replies are turned into {"text":"<the text>"}.
function jsonTextFetch(inner) {
  return async (input, init) => {
    const res = await inner(input, init);
    if (!res.body) return res;
    return new Response(res.body.pipeThrough(sseTransform(rewriteJSONEvent)), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

module.exports = { toolCallFetch, jsonTextFetch, TOOL_CALL_ID };

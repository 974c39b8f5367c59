// The page's HTTP side: the API key (asked once, kept for the browser session, sent as a
// Bearer header) and server-sent events read through fetch streaming (EventSource cannot send
// headers). Everything hangs off one global, RL.
"use strict";
const RL = {};

RL.apiKey = sessionStorage.getItem("radixlm-api-key") || "";
RL.keyWaiters = [];

RL.headers = function (extra) {
  const h = Object.assign({}, extra || {});
  if (RL.apiKey) h["Authorization"] = "Bearer " + RL.apiKey;
  return h;
};

// Shows the key form; resolves once a key is entered.
RL.askForKey = function (message) {
  document.getElementById("key-form").classList.remove("hidden");
  document.getElementById("key-error").textContent = message || "";
  document.getElementById("key-input").focus();
  return new Promise((resolve) => RL.keyWaiters.push(resolve));
};

RL.setKey = function (key) {
  RL.apiKey = key;
  sessionStorage.setItem("radixlm-api-key", key);
  document.getElementById("key-form").classList.add("hidden");
  const waiters = RL.keyWaiters;
  RL.keyWaiters = [];
  waiters.forEach((resolve) => resolve());
};

// fetch with the key; on 401 asks for a key and tries again.
RL.fetch = async function (path, options) {
  for (;;) {
    const opts = Object.assign({}, options || {});
    opts.headers = RL.headers(opts.headers);
    const response = await fetch(path, opts);
    if (response.status !== 401) return response;
    let message = "";
    try { message = (await response.json()).error.message; } catch (e) { /* not JSON */ }
    await RL.askForKey(RL.apiKey ? message : "");
  }
};

// Reads an SSE response body, calling onEvent(name, data) per event ("message" when unnamed).
// Resolves when the stream ends; rejects on network errors or abort.
RL.readEvents = async function (response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(name, data.join("\n"));
    }
  }
};

RL.errorText = async function (response) {
  try {
    const body = await response.json();
    return (body.error && body.error.message) || JSON.stringify(body);
  } catch (e) {
    return "HTTP " + response.status;
  }
};

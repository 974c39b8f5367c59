// The playground: completion through the native POST /generate, chat through
// POST /v1/chat/completions, both streamed; sampling controls; a regex / JSON schema / EBNF
// constraint; per response the cached tokens, jump-forward tokens and timings.
"use strict";
RL.playground = (function () {
  const $ = (id) => document.getElementById(id);
  const chat = [];  // {role, content}
  let controller = null;

  function num(id) {
    const v = $(id).value.trim();
    return v === "" ? undefined : Number(v);
  }

  function samplingParams() {
    const p = {
      max_new_tokens: num("max-new-tokens"),
      temperature: num("temperature"),
      top_p: num("top-p"),
      top_k: num("top-k"),
      min_p: num("min-p"),
      frequency_penalty: num("frequency-penalty"),
      presence_penalty: num("presence-penalty"),
    };
    const stop = $("stop").value.split("\n").filter((s) => s.length);
    if (stop.length) p.stop = stop;
    const kind = $("constraint-kind").value;
    const text = $("constraint-text").value;
    if (kind && text.trim()) p[kind] = text;
    return p;
  }

  function chatBody(prompt) {
    const p = samplingParams();
    const body = {
      model: "default",
      messages: chat.concat([{ role: "user", content: prompt }]),
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: p.max_new_tokens,
      temperature: p.temperature,
      top_p: p.top_p,
      frequency_penalty: p.frequency_penalty,
      presence_penalty: p.presence_penalty,
    };
    if (p.top_k !== undefined) body.top_k = p.top_k;
    if (p.min_p !== undefined) body.min_p = p.min_p;
    if (p.stop) body.stop = p.stop;
    for (const kind of ["regex", "json_schema", "ebnf"]) if (p[kind]) body[kind] = p[kind];
    return body;
  }

  function renderChatLog() {
    const log = $("chat-log");
    log.textContent = "";
    for (const m of chat) {
      const div = document.createElement("div");
      div.className = "msg";
      const who = document.createElement("b");
      who.textContent = m.role + ": ";
      div.append(who, m.content);
      log.append(div);
    }
    log.scrollTop = log.scrollHeight;
  }

  function showStats(s) {
    const el = $("response-stats");
    el.textContent = "";
    const items = [
      ["prompt tokens", s.prompt_tokens], ["completion tokens", s.completion_tokens],
      ["cached tokens", s.cached_tokens], ["jump-forward tokens", s.jump_forward_tokens],
      ["first chunk", s.ttft_ms !== undefined ? s.ttft_ms.toFixed(0) + " ms" : undefined],
      ["total", s.total_ms !== undefined ? s.total_ms.toFixed(0) + " ms" : undefined],
      ["decode", s.tok_per_s !== undefined ? s.tok_per_s.toFixed(1) + " tok/s" : undefined],
      ["finish", s.finish_reason],
    ];
    for (const [name, value] of items) {
      if (value === undefined || value === null) continue;
      const span = document.createElement("span");
      const b = document.createElement("b");
      b.textContent = String(value);
      span.append(name + " ", b);
      el.append(span);
    }
    el.dataset.cachedTokens = s.cached_tokens !== undefined ? String(s.cached_tokens) : "";
    el.dataset.completionTokens = s.completion_tokens !== undefined ? String(s.completion_tokens) : "";
  }

  async function send() {
    const prompt = $("prompt").value;
    if (!prompt.trim()) { $("status").textContent = "the prompt is empty"; return; }
    const isChat = $("mode-chat").checked;
    $("send").disabled = true;
    $("stop-button").disabled = false;
    $("output").textContent = "";
    $("status").textContent = "sending…";
    $("output").dataset.state = "streaming";
    showStats({});
    controller = new AbortController();
    const start = performance.now();
    const stats = {};
    let text = "";
    let chunks = 0;
    let firstAt;
    try {
      const path = isChat ? "/v1/chat/completions" : "/generate";
      const body = isChat ? chatBody(prompt)
                          : { text: prompt, sampling_params: samplingParams(), stream: true };
      const response = await RL.fetch(path, {
        method: "POST", body: JSON.stringify(body), signal: controller.signal,
        headers: { "Content-Type": "application/json" },
      });
      if (!response.ok) throw new Error(await RL.errorText(response));
      $("status").textContent = "streaming…";
      await RL.readEvents(response, (name, data) => {
        if (data === "[DONE]") return;
        const event = JSON.parse(data);
        if (event.error) throw new Error(event.error.message || JSON.stringify(event.error));
        if (isChat) {
          for (const c of event.choices || []) {
            if (c.delta && c.delta.content) text += c.delta.content;
            if (c.finish_reason) stats.finish_reason = c.finish_reason;
          }
          if (event.usage) {
            stats.prompt_tokens = event.usage.prompt_tokens;
            stats.completion_tokens = event.usage.completion_tokens;
            const d = event.usage.prompt_tokens_details;
            if (d) stats.cached_tokens = d.cached_tokens;
          }
        } else {
          // Cumulative text by default; deltas with --incremental-streaming-output.
          const t = event.text || "";
          text = t.startsWith(text) ? t : text + t;
          const m = event.meta_info || {};
          for (const k of ["prompt_tokens", "completion_tokens", "cached_tokens", "jump_forward_tokens"]) {
            if (m[k] !== undefined) stats[k] = m[k];
          }
          if (m.finish_reason) {
            stats.finish_reason = typeof m.finish_reason === "object" ? m.finish_reason.type : m.finish_reason;
          }
        }
        chunks += 1;
        if (firstAt === undefined) firstAt = performance.now();
        $("output").textContent = text;
        $("output").dataset.chunks = String(chunks);
      });
      const end = performance.now();
      stats.total_ms = end - start;
      if (firstAt !== undefined) {
        stats.ttft_ms = firstAt - start;
        if (stats.completion_tokens > 1 && end > firstAt) {
          stats.tok_per_s = (stats.completion_tokens - 1) / ((end - firstAt) / 1000);
        }
      }
      showStats(stats);
      if (isChat) {
        chat.push({ role: "user", content: prompt }, { role: "assistant", content: text });
        renderChatLog();
        $("prompt").value = "";
      }
      $("status").textContent = "done";
    } catch (e) {
      $("status").textContent = e.name === "AbortError" ? "stopped" : "error: " + e.message;
    } finally {
      $("output").dataset.state = "done";
      $("send").disabled = false;
      $("stop-button").disabled = true;
      controller = null;
    }
  }

  function init() {
    $("send").addEventListener("click", send);
    $("stop-button").addEventListener("click", () => controller && controller.abort());
    $("prompt").addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) send();
    });
    $("clear-chat").addEventListener("click", () => { chat.length = 0; renderChatLog(); });
  }

  return { init, send };
})();

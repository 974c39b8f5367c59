// The live radix-tree view: GET /radix_tree/events (fetch-streamed SSE) feeds a virtualized
// indented list (only the rows in view are in the DOM, so a 10,000-node tree updates in a few
// milliseconds), the eviction log, and two charts over time: KV pool use and cache hit rate.
"use strict";
RL.tree = (function () {
  const $ = (id) => document.getElementById(id);
  const ROW = 20;            // px per row (matches style.css)
  const FLASH_MS = 4000;     // how long a hit / new node stays highlighted
  const HISTORY = 240;       // chart points kept
  let snapshot = null;       // last "tree" event
  let rows = [];             // [{entry, depth}] in display (depth-first) order
  let prevById = new Map();  // id → hit_count in the previous snapshot
  const flashes = new Map(); // id → {cls, until}
  let lastEvictionSeq = null;
  const freshEvictions = new Map();  // seq → until
  const history = [];
  let colors = null;
  let controller = null;
  let retryTimer = null;
  const view = { lastRenderMs: 0, updates: 0 };

  // ---- snapshot → rows ------------------------------------------------------------------

  function flatten(nodes) {
    const children = nodes.map(() => []);
    for (let i = 1; i < nodes.length; i++) {
      if (nodes[i].parent >= 0) children[nodes[i].parent].push(i);
    }
    const out = [];
    const stack = [[0, 0]];
    while (stack.length) {
      const [i, depth] = stack.pop();
      out.push({ entry: nodes[i], depth });
      const kids = children[i];
      for (let k = kids.length - 1; k >= 0; k--) stack.push([kids[k], depth + 1]);
    }
    return out;
  }

  function applySnapshot(snap) {
    const start = performance.now();
    const now = Date.now();
    const seen = new Map();
    const first = snapshot === null;
    for (const n of snap.nodes) {
      if (n.kind !== "node" || n.id === null) continue;
      seen.set(n.id, n.hit_count);
      if (first || n.parent < 0) continue;
      const before = prevById.get(n.id);
      if (before === undefined) flashes.set(n.id, { cls: "new", until: now + FLASH_MS });
      else if (n.hit_count > before) flashes.set(n.id, { cls: "hit", until: now + FLASH_MS });
    }
    prevById = seen;
    snapshot = snap;
    rows = flatten(snap.nodes);
    $("tree-spacer").style.height = rows.length * ROW + "px";
    renderRows();
    applyCounters(snap);
    renderEvictions(snap);
    view.lastRenderMs = performance.now() - start;
    view.updates += 1;
    $("render-time").textContent = "update rendered in " + view.lastRenderMs.toFixed(1) + " ms";
    $("render-time").dataset.ms = view.lastRenderMs.toFixed(2);
  }

  function visible(text) {
    return text.replace(/\n/g, "⏎").replace(/\t/g, "⇥");
  }

  function cell(cls, text, title) {
    const span = document.createElement("span");
    span.className = cls;
    span.textContent = text;
    if (title) span.title = title;
    return span;
  }

  function renderRows() {
    const box = $("tree-rows");
    if (!snapshot) return;
    const scroll = $("tree-scroll");
    const first = Math.max(0, Math.floor(scroll.scrollTop / ROW) - 5);
    const last = Math.min(rows.length, first + Math.ceil(scroll.clientHeight / ROW) + 10);
    const now = Date.now();
    const frag = document.createDocumentFragment();
    // LoRA adapters' namespaces in the tree: the base model's subtrees are labelled too.
    const anyLora = snapshot.nodes.some((n) => n.lora_namespace > 0);
    for (let i = first; i < last; i++) {
      const { entry: n, depth } = rows[i];
      const div = document.createElement("div");
      div.className = "tree-row";
      div.style.transform = "translateY(" + i * ROW + "px)";
      div.style.position = "absolute";
      div.style.left = "0";
      div.style.right = "0";
      div.style.top = "0";
      let label;
      if (n.parent < 0) {
        label = "root";
      } else if (n.kind === "others") {
        label = "… " + n.merged_subtrees + " more subtrees";
        div.classList.add("others");
      } else {
        label = visible(n.text) + (n.tokens > 0 && n.text === "" ? "(" + n.tokens + " ids)" : "");
        // The top of a namespace (a LoRA adapter's runs never share nodes with another's or the
        // base model's): labelled by the adapter's name, or "base model" once adapters show.
        if (n.parent === 0 && n.lora_namespace > 0) {
          label = "[lora " + (n.lora_adapter || "#" + n.lora_namespace) + "] " + label;
        } else if (n.parent === 0 && anyLora) {
          label = "[base model] " + label;
        }
      }
      if (n.collapsed && n.kind === "node" && n.parent >= 0) div.classList.add("collapsed");
      if (n.lock_ref > 0) div.classList.add("locked");
      const flash = n.id !== null ? flashes.get(n.id) : undefined;
      if (flash && flash.until > now) div.classList.add(flash.cls);
      div.dataset.id = n.id === null ? "" : String(n.id);
      div.dataset.hits = String(n.hit_count);
      div.dataset.lock = String(n.lock_ref);
      div.dataset.tokens = String(n.tokens);
      const text = cell("c-text", label, n.text);
      text.style.paddingLeft = Math.min(depth, 40) * 12 + "px";
      const age = snapshot.clock >= n.last_access ? snapshot.clock - n.last_access : 0;
      const sub = n.subtree.nodes > 1 || n.collapsed
        ? n.subtree.nodes + " n / " + n.subtree.tokens + " t" : "";
      div.append(
        text,
        cell("c-tokens", n.kind === "others" ? "" : String(n.tokens)),
        cell("c-hits", String(n.hit_count), "matches that walked through this node"),
        cell("c-lock", n.lock_ref > 0 ? String(n.lock_ref) : "", "requests holding it (in use)"),
        cell("c-age", n.parent < 0 ? "" : String(age), "cache operations since its last access"),
        cell("c-sub", sub, "subtree: nodes / tokens"));
      frag.append(div);
    }
    box.replaceChildren(frag);
  }

  // ---- counters, charts, evictions -------------------------------------------------------

  function stat(name, value) {
    const span = document.createElement("span");
    const b = document.createElement("b");
    b.textContent = String(value);
    span.append(name + " ", b);
    return span;
  }

  function applyCounters(c) {
    const el = $("tree-summary");
    const used = c.pool.used;
    el.replaceChildren(
      stat("nodes", c.num_nodes),
      stat("tokens in tree", c.total_tokens),
      stat("evictable", c.evictable_tokens),
      stat("locked", c.protected_tokens),
      stat("KV pool", used + " / " + c.pool.size),
      stat("hit rate", (100 * c.cache_hit_rate).toFixed(1) + "%"),
      stat("hit tokens", c.cache_hit_tokens),
      stat("evictions", c.evictions_total + " (" + c.evicted_tokens_total + " t)"));
    if (c.disabled) el.append(stat("radix cache", "disabled"));
    if (snapshot && snapshot.truncated) el.append(stat("view", "collapsed to " + snapshot.nodes.length + " entries"));
    el.dataset.hitTokens = String(c.cache_hit_tokens);
    el.dataset.evictions = String(c.evictions_total);
    el.dataset.nodes = String(c.num_nodes);
    el.dataset.version = String(c.version);
    const prev = history.length ? history[history.length - 1] : null;
    const point = {
      t: Date.now(), size: c.pool.size, used,
      locked: c.protected_tokens, evictable: c.evictable_tokens,
      inflight: Math.max(0, used - c.total_tokens),
      hit: c.cache_hit_tokens, prefill: c.prefill_tokens, cum: c.cache_hit_rate, rate: null,
    };
    if (prev) {
      const dh = point.hit - prev.hit, dp = point.prefill - prev.prefill;
      point.rate = dh + dp > 0 ? dh / (dh + dp) : null;
    }
    history.push(point);
    if (history.length > HISTORY) history.shift();
    drawCharts();
  }

  function drawCharts() {
    const pool = $("pool-chart"), hit = $("hit-chart");
    if (!colors) {  // read once: getComputedStyle forces a style pass
      const css = getComputedStyle(document.documentElement);
      colors = { locked: css.getPropertyValue("--lock"), evictable: css.getPropertyValue("--hit"),
                 inflight: css.getPropertyValue("--accent"), dim: css.getPropertyValue("--dim") };
    }
    const g = pool.getContext("2d");
    g.clearRect(0, 0, pool.width, pool.height);
    const w = pool.width / HISTORY;
    history.forEach((p, i) => {
      let y = pool.height;
      for (const key of ["locked", "evictable", "inflight"]) {
        const h = p.size > 0 ? (p[key] / p.size) * pool.height : 0;
        g.fillStyle = colors[key];
        g.fillRect(i * w, y - h, Math.max(w, 1), h);
        y -= h;
      }
    });
    const h = hit.getContext("2d");
    h.clearRect(0, 0, hit.width, hit.height);
    const line = (key, color) => {
      h.strokeStyle = color;
      h.beginPath();
      let open = false;
      history.forEach((p, i) => {
        if (p[key] === null) { open = false; return; }
        const x = i * w, y = hit.height - p[key] * (hit.height - 2) - 1;
        if (open) h.lineTo(x, y); else h.moveTo(x, y);
        open = true;
      });
      h.stroke();
    };
    line("cum", colors.dim);
    h.fillStyle = colors.evictable;
    history.forEach((p, i) => {
      if (p.rate !== null) h.fillRect(i * w, hit.height - p.rate * (hit.height - 2) - 2, Math.max(w, 2), 3);
    });
  }

  function renderEvictions(snap) {
    const now = Date.now();
    if (lastEvictionSeq !== null) {
      for (const ev of snap.evictions) {
        if (ev.seq > lastEvictionSeq) freshEvictions.set(ev.seq, now + FLASH_MS * 2);
      }
    }
    if (snap.evictions.length) lastEvictionSeq = snap.evictions[snap.evictions.length - 1].seq;
    else if (lastEvictionSeq === null) lastEvictionSeq = 0;
    const list = $("evictions");
    const frag = document.createDocumentFragment();
    for (let i = snap.evictions.length - 1; i >= 0; i--) {
      const ev = snap.evictions[i];
      const li = document.createElement("li");
      li.value = ev.seq;
      li.textContent = "node #" + ev.node_id + ": " + ev.tokens + " tokens, " + ev.hit_count +
                       " hits — " + visible(ev.text);
      const until = freshEvictions.get(ev.seq);
      if (until && until > now) li.classList.add("fresh");
      frag.append(li);
    }
    list.replaceChildren(frag);
    list.dataset.total = String(snap.evictions_total);
    $("eviction-count").textContent = snap.evictions_total + " since start (" +
                                      snap.evicted_tokens_total + " tokens)";
  }

  // ---- the stream ------------------------------------------------------------------------

  function setLive(live, text) {
    const badge = $("tree-live");
    badge.textContent = text;
    badge.classList.toggle("live", live);
  }

  async function connect() {
    if (controller) controller.abort();
    clearTimeout(retryTimer);
    const mine = new AbortController();
    controller = mine;
    const maxNodes = $("max-nodes").value;
    try {
      const response = await RL.fetch("/radix_tree/events?max_nodes=" + maxNodes, { signal: mine.signal });
      if (!response.ok) throw new Error(await RL.errorText(response));
      setLive(true, "live");
      snapshot = null;
      await RL.readEvents(response, (name, data) => {
        if (name === "tree") applySnapshot(JSON.parse(data));
        else if (name === "stats") applyCounters(JSON.parse(data));
      });
      setLive(false, "ended");
    } catch (e) {
      if (mine.signal.aborted) return;
      setLive(false, "offline: " + e.message);
    }
    if (controller === mine) retryTimer = setTimeout(connect, 2000);
  }

  function init() {
    $("tree-scroll").addEventListener("scroll", () => requestAnimationFrame(renderRows));
    $("max-nodes").addEventListener("change", connect);
    // Re-render now and then so highlights fade even when no event comes.
    setInterval(() => { if (snapshot) { renderRows(); renderEvictions(snapshot); } }, 1000);
    connect();
  }

  return { init, applySnapshot, view, get snapshot() { return snapshot; } };
})();

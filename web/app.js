// Start-up: the key form, the model's name, then the playground and the tree view.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    RL.setKey($("key-input").value.trim());
  });
  $("key-button").addEventListener("click", () => RL.askForKey(""));
  RL.fetch("/v1/models")
    .then((r) => (r.ok ? r.json() : null))
    .then((body) => { if (body && body.data && body.data[0]) $("model-name").textContent = body.data[0].id; })
    .catch(() => {});
  RL.playground.init();
  RL.tree.init();
})();

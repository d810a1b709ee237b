// Keyboard shortcuts for the review form: the key shown on a button submits that answer.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) { return; }
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) { return; }
    var form = document.getElementById("answer-form");
    if (!form || form.dataset.sent === "1") { return; }
    var key = event.key.toLowerCase();
    var buttons = form.querySelectorAll("button[data-key]");
    for (var i = 0; i < buttons.length; i++) {
      if (buttons[i].dataset.key === key) {
        event.preventDefault();
        form.dataset.sent = "1";
        buttons[i].classList.add("chosen");
        buttons[i].click();
        return;
      }
    }
  });
  // One submission per page: a double click or key repeat does not send a second answer.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.id !== "answer-form") { return; }
    if (form.dataset.submitted === "1") { event.preventDefault(); return; }
    form.dataset.submitted = "1";
  });
})();

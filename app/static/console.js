// Behaviour that the pages need beyond htmx. Kept out of the HTML so a strict Content-Security-Policy holds.
(function () {
  "use strict";

  // A form with data-confirm asks before it submits (the launch confirmation).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form instanceof HTMLFormElement ? form.getAttribute("data-confirm") : null;
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  }, true);
})();

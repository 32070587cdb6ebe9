// Behaviour that the pages need beyond htmx. Kept out of the HTML so a strict Content-Security-Policy holds.
(function () {
  "use strict";

  // Every change carries the CSRF token: htmx requests in a header, plain forms in a hidden field.
  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }
  document.addEventListener("htmx:configRequest", function (event) {
    event.detail.headers["X-CSRFToken"] = csrfToken();
    // A form that posts on "change" is the htmx element, so htmx names the form as the trigger; the server
    // redraws parts by the field that changed (e.g. "Answers are" redraws the Reward section), so name it.
    var changed = event.detail.triggeringEvent && event.detail.triggeringEvent.target;
    if (changed && changed !== event.detail.elt && changed.name) {
      event.detail.headers["HX-Trigger-Name"] = changed.name;
    }
  });
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form instanceof HTMLFormElement && form.method.toLowerCase() === "post" && !form.elements._csrf_token) {
      var field = document.createElement("input");
      field.type = "hidden";
      field.name = "_csrf_token";
      field.value = csrfToken();
      form.appendChild(field);
    }
  }, true);

  // A form with data-confirm asks before it submits (the launch confirmation).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form instanceof HTMLFormElement ? form.getAttribute("data-confirm") : null;
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  }, true);
})();

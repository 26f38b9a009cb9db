// Keyboard shortcuts of the evidence pages (each page lists its own in a hint):
//   gallery: j / k or the arrow keys move between photographs, Enter opens one,
//            n / p the next or previous page;
//   item:    n / p the next or previous item, r the review decision, g the gallery.
// Keys typed into a form are never taken. Loaded from the app's own static files.
(function () {
  "use strict";

  function typing(event) {
    var t = event.target;
    return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(t.tagName));
  }

  function follow(selector) {
    var link = document.querySelector(selector);
    if (link) {
      link.click();
      return true;
    }
    return false;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (typing(event)) return;
    var rtl = document.documentElement.dir === "rtl";
    var tiles = Array.prototype.slice.call(
      document.querySelectorAll("[data-keys='gallery'] li.tile > a")
    );
    if (tiles.length) {
      var forward = rtl ? "ArrowLeft" : "ArrowRight";
      var back = rtl ? "ArrowRight" : "ArrowLeft";
      var step = event.key === "j" || event.key === forward ? 1
        : event.key === "k" || event.key === back ? -1 : 0;
      if (step) {
        var at = tiles.indexOf(document.activeElement);
        var next = at < 0 ? 0 : Math.min(tiles.length - 1, Math.max(0, at + step));
        tiles[next].focus();
        event.preventDefault();
        return;
      }
    }
    var handled = false;
    if (event.key === "n") handled = follow("a[rel='next']");
    else if (event.key === "p") handled = follow("a[rel='prev']");
    else if (event.key === "g") handled = follow("a[data-key='gallery']");
    else if (event.key === "r") {
      var choice = document.querySelector("#review input[name='to_status']");
      if (choice) {
        choice.focus();
        choice.scrollIntoView({block: "center"});
        handled = true;
      }
    }
    if (handled) event.preventDefault();
  });
})();

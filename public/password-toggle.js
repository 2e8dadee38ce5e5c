// Progressive enhancement for the password fields (issue 16), loaded only where the page allows it
// (allowPageScript: CSP script-src 'self', never inline). Without JavaScript the forms work as they are.
//
// 1. A "Show password" toggle for each `[data-password-toggle]` wrapper: a real <button> (keyboard:
//    Tab, Enter, Space) whose name stays the same while aria-pressed says whether the password is
//    shown (the ARIA toggle-button pattern); its translated name comes from the data attribute.
// 2. "Forgot password?" (`[data-forgot-link]`) carries the email as it is typed, so the reset page
//    opens with it filled in.
(function () {
  'use strict';

  document.querySelectorAll('[data-password-toggle]').forEach(function (wrap) {
    var input = wrap.querySelector('input[type="password"]');
    var label = wrap.getAttribute('data-password-toggle');
    if (!input || !label || !input.id) return;
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'password-toggle';
    button.textContent = label;
    button.setAttribute('aria-pressed', 'false');
    button.setAttribute('aria-controls', input.id);
    button.addEventListener('click', function () {
      var show = input.type === 'password';
      input.type = show ? 'text' : 'password';
      button.setAttribute('aria-pressed', show ? 'true' : 'false');
    });
    // A password shown on screen is never submitted as a text field's autofill entry: hidden again before sending.
    if (input.form)
      input.form.addEventListener('submit', function () {
        input.type = 'password';
        button.setAttribute('aria-pressed', 'false');
      });
    wrap.classList.add('has-toggle');
    input.insertAdjacentElement('afterend', button);
  });

  var forgot = document.querySelector('[data-forgot-link]');
  var email = document.getElementById('email');
  if (forgot && email) {
    var update = function () {
      var url = new URL(forgot.getAttribute('href'), window.location.href);
      var value = email.value.trim();
      if (value) url.searchParams.set('email', value);
      else url.searchParams.delete('email');
      forgot.setAttribute('href', url.pathname + url.search);
    };
    email.addEventListener('input', update);
    update();
  }
})();

// Passkey buttons of the hosted pages (DESIGN §15): the only script these pages load, with the
// @simplewebauthn/browser bundle. Each passkey form carries data-passkey="create" (account page) or
// "get" (sign-in, second factor) and data-options (where to POST for the ceremony's options). The
// form is shown only when the browser can do WebAuthn; on submit the script runs the ceremony,
// puts the browser's answer in the hidden "credential" field and submits the form as usual, so the
// server answers with a page or a redirect exactly as for any other form.
(function () {
  'use strict';
  var lib = window.SimpleWebAuthnBrowser;
  if (!lib || !lib.browserSupportsWebAuthn()) return;

  // English defaults; a form may carry its page's language in data-msg-* attributes (data-msg-cancelled, …).
  var MESSAGES = {
    NotAllowedError: ['cancelled', 'The passkey request was cancelled or timed out.'],
    InvalidStateError: ['registered', 'This passkey is already registered for your account.'],
    SecurityError: ['insecure', 'Passkeys cannot be used on this address.'],
  };
  function text(form, name, fallback) {
    return form.getAttribute('data-msg-' + name) || fallback;
  }
  function messageFor(form, err) {
    var known = err && MESSAGES[err.name];
    return known ? text(form, known[0], known[1]) : null;
  }

  function showError(form, message) {
    var el = form.querySelector('[data-passkey-error]');
    if (!el) return;
    el.textContent = message || '';
    el.className = message ? 'field-error' : '';
  }

  function fetchOptions(form) {
    var body = new URLSearchParams();
    ['_csrf', 'account', 'restart'].forEach(function (name) {
      var input = form.querySelector('input[name="' + name + '"]');
      if (input) body.set(name, input.value);
    });
    return fetch(form.getAttribute('data-options'), {
      method: 'POST',
      credentials: 'same-origin',
      headers: { Accept: 'application/json' },
      body: body,
    }).then(function (res) {
      return res
        .json()
        .catch(function () {
          return {};
        })
        .then(function (json) {
          if (!res.ok || !json.options)
            throw new Error(
              json.error_description ||
                json.error ||
                text(form, 'unavailable', 'Passkeys are not available right now.'),
            );
          return json.options;
        });
    });
  }

  function finish(form, credential) {
    form.querySelector('input[name="credential"]').value = JSON.stringify(credential);
    form.submit(); // no submit event: the ceremony is not started again
  }

  function ceremony(form, autofill) {
    var create = form.getAttribute('data-passkey') === 'create';
    return fetchOptions(form)
      .then(function (options) {
        return create
          ? lib.startRegistration({ optionsJSON: options })
          : lib.startAuthentication({ optionsJSON: options, useBrowserAutofill: autofill });
      })
      .then(function (credential) {
        finish(form, credential);
      });
  }

  var busy = false;
  document.querySelectorAll('form[data-passkey]').forEach(function (form) {
    form.hidden = false;
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (busy) return;
      busy = true;
      showError(form, '');
      ceremony(form, false).catch(function (err) {
        busy = false;
        // AbortError: another ceremony (e.g. autofill) replaced this one; nothing to say.
        if (err && err.name === 'AbortError') return;
        showError(
          form,
          messageFor(form, err) || (err && err.message) || text(form, 'generic', 'Something went wrong. Try again.'),
        );
      });
    });
  });
  document.querySelectorAll('[data-passkey-fallback]').forEach(function (el) {
    el.hidden = true;
  });

  // Conditional UI: the browser offers its passkeys in the email field's autofill
  // (autocomplete="username webauthn"); picking one signs in as the button does.
  var conditional = document.querySelector('form[data-passkey="get"][data-autofill]');
  if (conditional && lib.browserSupportsWebAuthnAutofill) {
    lib.browserSupportsWebAuthnAutofill().then(function (supported) {
      if (!supported) return;
      ceremony(conditional, true).catch(function () {
        /* cancelled, replaced by the button, or expired: the page still works */
      });
    });
  }
})();

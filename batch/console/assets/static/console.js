// The console's one script: it passes WebAuthn requests between the console and the browser's
// passkeys. Everything it shows is set as text, never as markup.
"use strict";
(function () {
  var csrf = document.querySelector('meta[name="csrf"]').content;
  var status = document.getElementById("status");

  function say(text) { status.textContent = text; }

  function toBytes(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) { s += "="; }
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { out[i] = bin.charCodeAt(i); }
    return out.buffer;
  }

  function toText(buf) {
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) { bin += String.fromCharCode(bytes[i]); }
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf }
    }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) { throw new Error(j.error + " " + j.do); }
        return j;
      });
    });
  }

  function descriptors(list) {
    return (list || []).map(function (c) { return { type: c.type, id: toBytes(c.id), transports: c.transports }; });
  }

  function credentialJSON(c) {
    var r = c.response, out = { id: c.id, rawId: toText(c.rawId), type: c.type, clientExtensionResults: c.getClientExtensionResults(), response: { clientDataJSON: toText(r.clientDataJSON) } };
    if (r.attestationObject) { out.response.attestationObject = toText(r.attestationObject); }
    if (r.authenticatorData) {
      out.response.authenticatorData = toText(r.authenticatorData);
      out.response.signature = toText(r.signature);
      if (r.userHandle) { out.response.userHandle = toText(r.userHandle); }
    }
    return out;
  }

  function assert(beginURL, body, finishURL) {
    return post(beginURL, body).then(function (o) {
      var pk = o.publicKey;
      pk.challenge = toBytes(pk.challenge);
      pk.allowCredentials = descriptors(pk.allowCredentials);
      return navigator.credentials.get({ publicKey: pk });
    }).then(function (c) { return post(finishURL, credentialJSON(c)); });
  }

  function done(j) {
    if (j.message) { sessionStorage.setItem("said", j.message); }
    window.location.assign(j.redirect);
  }

  function failed(e) { say(e.message || String(e)); }

  var said = sessionStorage.getItem("said");
  if (said) { say(said); sessionStorage.removeItem("said"); }

  var register = document.getElementById("register");
  if (register) {
    register.addEventListener("click", function () {
      say("Touch your authenticator…");
      post("/register/begin", { name: document.getElementById("name").value }).then(function (o) {
        var pk = o.publicKey;
        pk.challenge = toBytes(pk.challenge);
        pk.user.id = toBytes(pk.user.id);
        pk.excludeCredentials = descriptors(pk.excludeCredentials);
        return navigator.credentials.create({ publicKey: pk });
      }).then(function (c) { return post("/register/finish", credentialJSON(c)); }).then(function (j) {
        document.getElementById("allowed-line").textContent = j.line;
        document.getElementById("registered").hidden = false;
        say("Registered. Give the line below to your administrator.");
      }).catch(failed);
    });
  }

  var signin = document.getElementById("signin");
  if (signin) {
    signin.addEventListener("click", function () {
      say("Touch your authenticator…");
      assert("/signin/begin", {}, "/signin/finish").then(done).catch(failed);
    });
  }

  var decide = document.querySelector(".decide");
  function sign(decision) {
    var reason = document.getElementById("reason");
    say("Touch your authenticator to sign…");
    assert("/sign/begin", { folder: decide.dataset.folder, file: decide.dataset.file, decision: decision, reason: reason ? reason.value : "" }, "/sign/finish").then(done).catch(failed);
  }
  ["approve", "refuse", "repeats"].forEach(function (id) {
    var b = document.getElementById(id);
    if (b) { b.addEventListener("click", function () { sign(id); }); }
  });
})();

/*
 * webark replay client, part 3: no script path to the live web. Runs after client.js
 * (whose window.__webarkRewrite it uses) in the same served script.
 *
 * - Navigations: location itself cannot be wrapped (its properties are unforgeable), so
 *   the Navigation API's "navigate" event is the guard: any navigation of this document
 *   to a URL outside the replay server (location.href / assign / replace, window.location
 *   = ..., a meta refresh added by script, a frame's top.location, a link or form whose
 *   URL was built past the wrappers) is cancelled and started again at its archive URL
 *   (a form's fields are submitted again, by POST if it was one). Browsers without the
 *   Navigation API keep the server-side rewriting of URL literals and the CSP.
 * - Other browsing contexts: a click (or middle click, or context menu) on a link whose
 *   URL leaves the archive, a form submitted to another window (target=_blank) and
 *   form.submit() get their URL rewritten first; a popup opened without a URL (its
 *   initial about:blank document has no navigate event) is handed out behind a proxy
 *   whose location rewrites what the opener assigns to it.
 * - WebSocket: connects to the replay server, which refuses it (a capture of a socket
 *   cannot be replayed); RTCPeerConnection gets no STUN/TURN servers.
 * - document.domain reads the archived host; setting it changes nothing.
 * - meta refresh: the content of a <meta http-equiv=refresh> set by script is rewritten.
 */
(function () {
  "use strict";
  var W = window;
  var api = W.__webarkRewrite;
  if (!api || W.__webarkGuardInstalled) {
    return;
  }
  Object.defineProperty(W, "__webarkGuardInstalled", { value: true });
  var loc = W.location;
  var later = W.setTimeout;
  var origSetAttribute = api.setAttribute;

  /* The archive URL for a navigation to url, or null when it stays on the replay server
   * (or is not http(s): javascript:, mailto: ...). */
  function escaping(url, base) {
    var u;
    try {
      u = new URL(String(url), base || loc.href);
    } catch (e) {
      return null;
    }
    if ((u.protocol !== "http:" && u.protocol !== "https:") || u.origin === loc.origin) {
      return null;
    }
    var fixed = api.rewrite(u.href, api.navMod());
    return fixed === u.href ? null : new URL(fixed, loc.href).href;
  }

  /* navigations of this document -------------------------------------------------- */
  function resubmit(action, formData, replace) {
    var form = document.createElement("form");
    form.method = "post";
    form.action = action;
    form.style.display = "none";
    formData.forEach(function (value, name) {
      if (typeof value === "string") {
        var input = document.createElement("input");
        input.type = "hidden";
        input.name = name;
        input.value = value;
        form.appendChild(input);
      }
    });
    (document.body || document.documentElement).appendChild(form);
    if (replace) {
      loc.replace(action); /* a replace cannot POST: the page itself, without the fields */
      return;
    }
    HTMLFormElement.prototype.submit.call(form);
  }
  if (W.navigation && typeof W.navigation.addEventListener === "function") {
    W.navigation.addEventListener("navigate", function (e) {
      if (!e.cancelable || !e.destination) {
        return;
      }
      var fixed = escaping(e.destination.url);
      if (fixed === null) {
        return;
      }
      e.preventDefault();
      var replace = e.navigationType === "replace";
      var post = e.formData;
      later(function () {
        if (post) {
          resubmit(fixed, post, replace);
        } else if (replace) {
          loc.replace(fixed);
        } else {
          loc.assign(fixed);
        }
      }, 0);
    });
  }

  /* links and forms that open other windows ----------------------------------------- */
  function linkOf(ev) {
    var path = ev.composedPath ? ev.composedPath() : [ev.target];
    for (var i = 0; i < path.length; i++) {
      var n = path[i];
      var tag = n && n.localName;
      if ((tag === "a" || tag === "area") && n.hasAttribute &&
          (n.hasAttribute("href") || n.hasAttribute("xlink:href"))) {
        return n;
      }
    }
    return null;
  }
  function fixLink(ev) {
    var a = linkOf(ev);
    if (!a) {
      return;
    }
    var href = typeof a.href === "string" ? a.href : a.getAttribute("href") || a.getAttribute("xlink:href");
    var fixed = escaping(href, a.baseURI);
    if (fixed !== null) {
      origSetAttribute.call(a, a.hasAttribute("href") ? "href" : "xlink:href", fixed);
    }
  }
  function fixForm(form, submitter) {
    if (!form || form.localName !== "form") {
      return;
    }
    if (submitter && submitter.hasAttribute && submitter.hasAttribute("formaction")) {
      var sfixed = escaping(submitter.formAction, submitter.baseURI);
      if (sfixed !== null) {
        origSetAttribute.call(submitter, "formaction", sfixed);
      }
    }
    var fixed = escaping(form.action, form.baseURI);
    if (fixed !== null) {
      origSetAttribute.call(form, "action", fixed);
    }
  }
  if (W.addEventListener) {
    ["click", "auxclick", "contextmenu", "dragstart"].forEach(function (type) {
      W.addEventListener(type, fixLink, true);
    });
    W.addEventListener("submit", function (ev) {
      fixForm(ev.target, ev.submitter);
    }, true);
  }
  var FormP = W.HTMLFormElement && W.HTMLFormElement.prototype;
  if (FormP && FormP.submit) {
    var origSubmit = FormP.submit;
    FormP.submit = function () {
      fixForm(this, null);
      return origSubmit.call(this);
    };
  }

  /* popups opened without a URL -------------------------------------------------------- */
  function popupLocation(win) {
    /* relative URLs resolve against the opener's original base, as in the live popup */
    function to(v) {
      return api.rewrite(String(v), api.navMod());
    }
    var proxy = {
      assign: function (v) { win.location.assign(to(v)); },
      replace: function (v) { win.location.replace(to(v)); },
      reload: function () { win.location.reload(); },
      toString: function () { return win.location.href; }
    };
    Object.defineProperty(proxy, "href", {
      get: function () { return win.location.href; },
      set: function (v) { win.location.href = to(v); }
    });
    ["protocol", "host", "hostname", "port", "pathname", "search", "hash", "origin"].forEach(function (k) {
      Object.defineProperty(proxy, k, {
        get: function () { return win.location[k]; },
        set: function (v) { if (k === "hash") { win.location.hash = v; } }
      });
    });
    return { proxy: proxy, to: to };
  }
  function guardPopup(win) {
    if (typeof Proxy !== "function") {
      return win;
    }
    var l = popupLocation(win);
    return new Proxy(win, {
      get: function (t, k) {
        if (k === "location") {
          return l.proxy;
        }
        var v = t[k];
        return typeof v === "function" && !/^[A-Z]/.test(String(k)) ? v.bind(t) : v;
      },
      set: function (t, k, v) {
        if (k === "location") {
          t.location.href = l.to(v);
        } else {
          t[k] = v;
        }
        return true;
      }
    });
  }
  if (typeof W.open === "function") {
    var coreOpen = W.open;
    W.open = function (url) {
      var win = coreOpen.apply(this, arguments);
      var u = url === undefined || url === null ? "" : String(url).trim();
      return win && (!u || /^about:blank$/i.test(u)) ? guardPopup(win) : win;
    };
  }

  /* WebSocket, WebRTC ------------------------------------------------------------------ */
  /* ws(s)://replay-host/{coll}/{ts}/{ws URL}: the replay server answers 403. */
  function socketUrl(url) {
    var u;
    try {
      u = new URL(String(url), api.baseUrl());
    } catch (e) {
      return url;
    }
    var original = u.href.replace(/^http(s?):/i, "ws$1:");
    return (loc.protocol === "https:" ? "wss://" : "ws://") + loc.host + api.prefixPath +
      api.timestamp + "/" + original;
  }
  if (W.WebSocket) {
    var OrigWebSocket = W.WebSocket;
    var WebSocket = function WebSocket(url, protocols) {
      var target = socketUrl(url);
      return arguments.length > 1 ? new OrigWebSocket(target, protocols) : new OrigWebSocket(target);
    };
    WebSocket.prototype = OrigWebSocket.prototype;
    ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (k) {
      Object.defineProperty(WebSocket, k, { value: OrigWebSocket[k], enumerable: true });
    });
    W.WebSocket = WebSocket;
  }
  ["RTCPeerConnection", "webkitRTCPeerConnection"].forEach(function (name) {
    var Orig = W[name];
    if (!Orig) {
      return;
    }
    var Peer = function RTCPeerConnection(config) {
      var args = Array.prototype.slice.call(arguments);
      args[0] = Object.assign({}, config || {}, { iceServers: [] });
      return Reflect.construct(Orig, args);
    };
    Peer.prototype = Orig.prototype;
    if (Orig.generateCertificate) {
      Peer.generateCertificate = Orig.generateCertificate.bind(Orig);
    }
    if (Orig.prototype.setConfiguration) {
      var origSetConfiguration = Orig.prototype.setConfiguration;
      Orig.prototype.setConfiguration = function (config) {
        return origSetConfiguration.call(this, Object.assign({}, config || {}, { iceServers: [] }));
      };
    }
    W[name] = Peer;
  });

  /* document.domain ----------------------------------------------------------------------- */
  var DocP = W.Document && W.Document.prototype;
  var domainDesc = DocP && Object.getOwnPropertyDescriptor(DocP, "domain");
  if (domainDesc && domainDesc.configurable) {
    Object.defineProperty(DocP, "domain", {
      configurable: true,
      enumerable: domainDesc.enumerable,
      get: function () {
        try {
          return new URL(api.baseUrl()).hostname;
        } catch (e) {
          return domainDesc.get.call(this);
        }
      },
      set: function (v) {
        /* the live site could relax to a parent domain; in the archive every page of the
         * replay server is one origin already, so there is nothing to relax */
        var host = this.domain;
        var want = String(v).toLowerCase();
        if (want !== host && host.slice(-want.length - 1) !== "." + want) {
          throw new DOMException("'" + v + "' is not a suffix of '" + host + "'.", "SecurityError");
        }
      }
    });
  }

  /* meta refresh set by script ------------------------------------------------------------ */
  function isRefresh(meta) {
    return /^\s*refresh\s*$/i.test(String(meta.getAttribute("http-equiv") || ""));
  }
  api.wrapSetter(W.HTMLMetaElement, "content", function (meta, v) {
    return isRefresh(meta) ? api.rewriteRefresh(v) : v;
  });
  api.wrapSetter(W.HTMLMetaElement, "httpEquiv", function (meta, v) {
    if (/^\s*refresh\s*$/i.test(String(v)) && meta.hasAttribute("content")) {
      origSetAttribute.call(meta, "content", api.rewriteRefresh(meta.getAttribute("content")));
    }
    return v;
  });
  var ElementP = W.Element && W.Element.prototype;
  if (ElementP && ElementP.setAttribute) {
    var coreSetAttribute = ElementP.setAttribute;
    ElementP.setAttribute = function (name, value) {
      var out = coreSetAttribute.call(this, name, value);
      if (String(name).toLowerCase() === "http-equiv" && this.localName === "meta" &&
          isRefresh(this) && this.hasAttribute("content")) {
        origSetAttribute.call(this, "content", api.rewriteRefresh(this.getAttribute("content")));
      }
      return out;
    };
  }
})();

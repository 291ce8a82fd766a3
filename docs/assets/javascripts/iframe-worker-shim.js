/*
 * iframe-worker 1.0.4's shim (https://github.com/squidfunk/iframe-worker, src/shim,
 * src/worker), as plain JavaScript: the Material theme's offline plugin asks for it so that
 * search works on a site opened from disk, where browsers refuse to start a Web Worker. Kept
 * here rather than loaded from unpkg.com, so the site loads nothing from the web.
 *
 * Copyright (c) 2020-2022 Martin Donath <martin.donath@squidfunk.com>
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this
 * software and associated documentation files (the "Software"), to deal in the Software
 * without restriction, including without limitation the rights to use, copy, modify, merge,
 * publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
 * to whom the Software is furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in all copies or
 * substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 * INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
 * PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
 * FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 * OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 * DEALINGS IN THE SOFTWARE.
 */
(function () {
  "use strict";

  /* The worker's runtime inside the iframe: postMessage to the page, importScripts by tags. */
  function postMessage(message, origin) {
    parent.postMessage(message, origin || "*");
  }

  function importScripts() {
    var urls = Array.prototype.slice.call(arguments);
    return urls.reduce(function (promise, url) {
      return promise.then(function () {
        return new Promise(function (resolve) {
          var script = document.createElement("script");
          script.src = url;
          script.onload = resolve;
          document.body.appendChild(script);
        });
      });
    }, Promise.resolve());
  }

  /* A Worker that runs its script in a hidden iframe of the page. */
  class IFrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.url = url;
      this.onerror = null;
      this.onmessage = null;
      this.onmessageerror = null;
      this.m = (ev) => {
        if (ev.source === this.w) {
          this.dispatchEvent(new MessageEvent("message", { data: ev.data }));
          if (this.onmessage) this.onmessage(ev);
        }
      };
      this.e = (message, filename, lineno, colno, error) => {
        if (filename === `${this.url}`) {
          const ev = new ErrorEvent("error", { message, filename, lineno, colno, error });
          this.dispatchEvent(ev);
          if (this.onerror) this.onerror(ev);
        }
      };
      const iframe = document.createElement("iframe");
      iframe.hidden = true;
      document.body.appendChild((this.iframe = iframe));
      this.w.document.open();
      this.w.document.write(
        "<html><body><script>" +
          `postMessage=${postMessage};` +
          `importScripts=${importScripts};` +
          'addEventListener("error",({error})=>{' +
          'parent.dispatchEvent(new ErrorEvent("error",{' +
          `filename:"${url}",` +
          "error" +
          "}))" +
          "})" +
          "</script>" +
          `<script src=${url}?${+Date.now()}></script>` +
          "</body></html>"
      );
      this.w.document.close();
      window.onmessage = this.m;
      window.onerror = this.e;
      this.r = new Promise((resolve, reject) => {
        this.w.onload = resolve;
        this.w.onerror = reject;
      });
    }

    terminate() {
      this.iframe.remove();
      window.onmessage = window.onerror = null;
    }

    postMessage(data) {
      void this.r.catch().then(() => {
        this.w.dispatchEvent(new MessageEvent("message", structuredClone({ data })));
      });
    }

    get w() {
      return this.iframe.contentWindow;
    }
  }

  window.IFrameWorker = IFrameWorker;
  if (location.protocol === "file:") window.Worker = IFrameWorker;
})();

/* mkdocs-syndicate: the public replies to a post's copies, shown under its "Also on" links.
 *
 * Reads, in the reader's browser and without a token, the replies of the post's Mastodon status
 * (GET /api/v1/statuses/:id/context) and Bluesky post (app.bsky.feed.getPostThread on a public
 * AppView), as the links' data-replies attributes name them. Nothing from the network is inserted
 * as HTML: a Mastodon reply's HTML is parsed into an inert document and only its text is kept, and
 * every value is set as text or as a checked http(s) link. When scripts, the services or the
 * network are unavailable, the plain links stay and nothing else happens.
 *
 * Bounded whatever a service answers: at most MAX_REPLIES replies are read and shown per copy and
 * in all, each reply's text at most MAX_TEXT characters; what is left out is one link away ("more
 * on Mastodon", to the copy or the reply itself).
 *
 * On a page the plugin did not build (Zensical, Hugo, any generator), the page has no "Also on"
 * block: the script then reads the site's syndication.json (written by `mkdocs-syndicate
 * site-files`; by default at the site's root, two folders above this script, else where the
 * script tag's data-syndication says), finds the page's post by its path, and puts the block in
 * the element with id "syndicate-links" if the page has one, else right after the script tag:
 *   <script src="/assets/syndicate/comments.js" defer></script>
 */
(function () {
  "use strict";

  var MAX_REPLIES = 200;
  var MAX_TEXT = 2000;
  var SCRIPT = document.currentScript;   // only known while this runs: kept for start()

  function webUrl(value) {
    try {
      var url = new URL(String(value), document.baseURI);
      return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
    } catch (e) {
      return null;
    }
  }

  function htmlToText(html) {
    // DOMParser makes an inert document: its scripts never run, its images never load.
    var doc = new DOMParser().parseFromString(String(html || ""), "text/html");
    doc.querySelectorAll("br").forEach(function (br) { br.replaceWith("\n"); });
    doc.querySelectorAll("p").forEach(function (p) { p.append("\n\n"); });
    return (doc.body.textContent || "").trim();
  }

  function mastodonReplies(answer) {   // the status's context: its descendants are the replies
    var all = answer && Array.isArray(answer.descendants) ? answer.descendants : [];
    // One more than is shown: enough to know there are more, without parsing 20,000 of them.
    return all.slice(0, MAX_REPLIES + 1).map(function (s) {
      s = s || {};
      var account = s.account || {};
      return {
        service: "Mastodon", text: htmlToText(s.content), url: s.url || s.uri, at: s.created_at,
        author: account.display_name || account.acct || "", authorUrl: account.url
      };
    });
  }

  function blueskyReplies(answer, web) {
    var found = [];
    (function walk(node, depth) {
      if (!node || depth > 10 || !Array.isArray(node.replies)) return;
      node.replies.forEach(function (reply) {
        if (found.length > MAX_REPLIES) return;   // enough to know there are more
        var post = reply && reply.post;
        if (!post || !post.record) return;
        var author = post.author || {};
        var rkey = String(post.uri || "").split("/").pop();
        found.push({
          service: "Bluesky", text: String(post.record.text || ""), at: post.record.createdAt || post.indexedAt,
          url: author.handle ? web + "/profile/" + encodeURIComponent(author.handle) + "/post/" + encodeURIComponent(rkey) : null,
          author: author.displayName || author.handle || "",
          authorUrl: author.handle ? web + "/profile/" + encodeURIComponent(author.handle) : null
        });
        walk(reply, depth + 1);
      });
    })(answer && answer.thread, 0);
    return found;
  }

  var READERS = { mastodon: mastodonReplies, bluesky: blueskyReplies };

  function link(text, href) {
    var url = href ? webUrl(href) : null;
    var element = document.createElement(url ? "a" : "span");
    if (url) {
      element.href = url;
      element.rel = "nofollow ugc";
    }
    element.textContent = text;
    return element;
  }

  function more(service, href) {
    var element = link("more on " + service, href);
    element.className = "syndicate-replies-more";
    return element;
  }

  function show(block, replies, cut) {
    if (!replies.length) return;
    replies.sort(function (a, b) { return String(a.at).localeCompare(String(b.at)); });
    if (replies.length > MAX_REPLIES) {
      replies.slice(MAX_REPLIES).forEach(function (reply) { cut[reply.service] = cut[reply.service] || reply.copy; });
      replies = replies.slice(0, MAX_REPLIES);
    }
    var section = document.createElement("section");
    section.className = "syndicate-replies";
    var heading = document.createElement("h2");
    heading.textContent = block.getAttribute("data-replies-heading") || "Replies";
    section.appendChild(heading);
    var list = document.createElement("ol");
    replies.forEach(function (reply) {
      var item = document.createElement("li");
      item.className = "syndicate-reply";
      var who = document.createElement("p");
      who.className = "syndicate-reply-author";
      who.appendChild(link(reply.author || "?", reply.authorUrl));
      who.append(" · ");
      who.appendChild(link(reply.service, reply.url));
      var text = document.createElement("p");
      text.className = "syndicate-reply-text";
      text.style.whiteSpace = "pre-line";
      var words = String(reply.text || "");
      text.textContent = words.length > MAX_TEXT ? words.slice(0, MAX_TEXT) + "… " : words;
      if (words.length > MAX_TEXT) text.appendChild(more(reply.service, reply.url || reply.copy));
      item.appendChild(who);
      item.appendChild(text);
      list.appendChild(item);
    });
    section.appendChild(list);
    Object.keys(cut).forEach(function (service) {   // a copy with more replies than are shown
      var rest = document.createElement("p");
      rest.appendChild(more(service, cut[service]));
      section.appendChild(rest);
    });
    block.after(section);
  }

  function load(block) {
    var links = block.querySelectorAll("a[data-replies][data-service-type]");
    var cut = {};   // service -> the copy's link, for a copy with more replies than are shown
    var asks = Array.prototype.map.call(links, function (a) {
      var read = READERS[a.getAttribute("data-service-type")];
      var url = webUrl(a.getAttribute("data-replies"));
      if (!read || !url || typeof fetch !== "function") return Promise.resolve([]);
      return fetch(url, { headers: { Accept: "application/json" }, credentials: "omit" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (answer) {
          var replies = read(answer, (a.getAttribute("data-web") || "https://bsky.app").replace(/\/+$/, ""));
          replies.forEach(function (reply) { reply.copy = a.href; });
          if (replies.length > MAX_REPLIES) {
            cut[replies[0].service] = a.href;
            replies = replies.slice(0, MAX_REPLIES);
          }
          return replies;
        })
        .catch(function () { return []; });   // a service down: its replies are not shown
    });
    Promise.all(asks).then(function (lists) { show(block, [].concat.apply([], lists), cut); });
  }

  function pathOf(value) {   // a page's path, as a post's URL and the address bar may spell it
    try {
      var path = new URL(String(value), document.baseURI).pathname.replace(/\/index\.html?$/, "/");
      if (!/\/$/.test(path) && !/\.[^\/]*$/.test(path)) path += "/";
      return decodeURI(path);
    } catch (e) {
      return null;
    }
  }

  function blockFor(copies, lead) {   // the block the plugin renders, from syndication.json's copies
    var aside = document.createElement("aside");
    aside.className = "syndicate-links";
    var p = document.createElement("p");
    p.append(String(lead || "Also on:") + " ");
    copies.forEach(function (copy, n) {
      var url = copy && webUrl(copy.url);
      if (!url) return;
      if (n && p.lastChild && p.lastChild.nodeName === "A") p.append(" \u00b7 ");   // " · ", whatever the page's charset
      var a = document.createElement("a");
      a.className = "u-syndication";
      a.rel = "syndication";
      a.href = url;
      a.textContent = String(copy.service || copy.channel || url);
      var replies = copy.replies;
      if (replies && READERS[replies.type] && webUrl(replies.url)) {
        a.setAttribute("data-service-type", replies.type);
        a.setAttribute("data-replies", webUrl(replies.url));
        if (replies.web && webUrl(replies.web)) a.setAttribute("data-web", webUrl(replies.web));
      }
      p.appendChild(a);
    });
    aside.appendChild(p);
    return p.querySelector("a") ? aside : null;
  }

  function fromListing() {
    var given = SCRIPT && SCRIPT.getAttribute("data-syndication");
    var base = SCRIPT && SCRIPT.src ? SCRIPT.src : document.baseURI;
    var listing = webUrl(given ? new URL(given, document.baseURI).href : new URL("../../syndication.json", base).href);
    if (!listing || typeof fetch !== "function") return;
    var here = pathOf(location.href);
    fetch(listing, { headers: { Accept: "application/json" }, credentials: "omit" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        var posts = data && typeof data.posts === "object" && data.posts ? data.posts : {};
        var url = Object.keys(posts).filter(function (u) { return pathOf(u) === here; })[0];
        if (!url || !Array.isArray(posts[url]) || document.querySelector("aside.syndicate-links")) return;
        var block = blockFor(posts[url], data.lead);
        if (!block) return;
        var slot = document.getElementById("syndicate-links");
        if (slot) slot.appendChild(block);
        else if (SCRIPT && SCRIPT.parentNode) SCRIPT.after(block);
        else return;
        load(block);
      })
      .catch(function () {});   // no listing, or not JSON: the page stays as it is
  }

  function start() {
    var blocks = document.querySelectorAll("aside.syndicate-links");
    if (blocks.length) blocks.forEach(load);   // the plugin rendered the block (MkDocs)
    else fromListing();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

/* mkdocs-syndicate: the conversation about a post, shown under its "Also on" links.
 *
 * Reads, in the reader's browser and without a token, what each copy's service makes public, as
 * the links' data-replies attributes name it:
 *   Mastodon  GET /api/v1/statuses/:id/context (the replies) and GET /api/v1/statuses/:id (counts)
 *   Bluesky   app.bsky.feed.getPostThread on a public AppView (the replies and the counts)
 *   DEV       GET /api/comments?a_id=:id (the comments, paged by their threads)
 * and shows, beside each link, its counts (favourites, boosts, likes, reposts, replies), and below
 * the block one list: every reply with its author, its time (<time datetime>) and its links,
 * nested as the thread is (at most MAX_DEPTH levels; deeper, a link to the thread), oldest first
 * by the time each service gives, then a "Reply on <service>" link per copy, or, with no reply
 * yet, an invitation to write the first.
 *
 * A post announced as a thread (`thread: true`): the copy is its first part, and the link's
 * data-parts lists the ids of its later parts (from the ledger's `parts:`; `parts` in
 * syndication.json). They are the post, not replies: left out of the list, and a reply to one of
 * them is a reply to the post (at the top, its own replies nested under it). The author's other
 * replies are shown as any reply. Mastodon's replies_count and Bluesky's replyCount count part 2
 * (a direct reply to part 1): the parts found directly under part 1 are taken off the count.
 *
 * What the services hide stays hidden: a Mastodon reply's content warning (spoiler_text,
 * sensitive) is shown and its text folded behind it (<details>); a Bluesky reply the post's
 * author hid (its threadgate's hiddenReplies), one labelled !hide, one from an account the reader
 * blocks, mutes or is blocked by, and blocked or deleted posts are left out with what is below
 * them; a DEV comment the author hid or that was deleted is left out with its thread. Labels that
 * warn (!warn, porn, sexual, nudity, graphic-media) fold the text as a content warning does.
 *
 * Nothing from the network is inserted as HTML: a reply's HTML (Mastodon, DEV) is parsed into an
 * inert document, and only its text and its http(s) links are kept, rebuilt as new nodes (links
 * rel="nofollow ugc"); Bluesky's links come from its facets. Bounded whatever a service answers:
 * at most MAX_REPLIES replies are read per copy and shown in all, each reply's text at most
 * MAX_TEXT characters; what is left out is one link away ("more on Mastodon", to the copy or the
 * reply). When scripts, the services or the network are unavailable, the plain links stay.
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
  var MAX_WARNING = 500;      // a content warning's own text
  var MAX_DEPTH = 6;          // levels shown; a deeper thread is a link away
  var DEV_PER_PAGE = 50;      // DEV's default page of threads
  var DEV_PAGES = 4;          // pages read at most
  var MASTODON_LOGGED_OUT = 60;   // Mastodon's cap on the replies a reader without a token gets
  var WARNING_LABELS = { "!warn": 1, porn: 1, sexual: 1, nudity: 1, "graphic-media": 1, gore: 1 };
  var SCRIPT = document.currentScript;   // only known while this runs: kept for start()
  // Selectors more specific than a theme's own list rules (Material's `[dir=ltr] .md-typeset ol
  // li`, `.md-typeset ol ol ol`): the thread is neither numbered nor indented by them.
  var STYLE = [
    // The scrollbar's place kept (the plugin's block says so too, from the first paint): a short
    // page the replies make scroll would otherwise shift sideways as they appear.
    "html{scrollbar-gutter:stable}",
    ".syndicate-replies{margin-top:1.5em;min-height:4.5em}",
    "section.syndicate-replies ol.syndicate-thread{list-style:none;margin:0;padding:0}",
    "section.syndicate-replies ol.syndicate-thread ol.syndicate-thread{margin:0 0 0 .4em;padding:0 0 0 1em;",
    "border-left:.15em solid var(--md-default-fg-color--lightest,rgba(127,127,127,.35))}",
    "section.syndicate-replies ol.syndicate-thread>li.syndicate-reply{list-style:none;margin:.9em 0 0 0;padding:0}",
    ".syndicate-reply-author,.syndicate-counts,.syndicate-replies-status{font-size:.85em;margin:0}",
    ".syndicate-reply-text{white-space:pre-line;overflow-wrap:anywhere;margin:.2em 0 0 0}",
    ".syndicate-reply-cw summary{cursor:pointer;margin-top:.2em}",
    ".syndicate-replies-actions{margin-top:1em}"
  ].join("");

  function webUrl(value) {
    try {
      var url = new URL(String(value), document.baseURI);
      return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
    } catch (e) {
      return null;
    }
  }

  function text(value) {
    return typeof value === "string" ? value : "";
  }

  function count(value) {
    return typeof value === "number" && isFinite(value) && value > 0 ? Math.floor(value) : 0;
  }

  // ------------------------------------------------------------------ a reply's words and links
  // A reply's body is a list of parts: strings (text, with "\n" for breaks) and {text, href}.

  var SKIPPED = { SCRIPT: 1, STYLE: 1, TEMPLATE: 1, NOSCRIPT: 1, IFRAME: 1, OBJECT: 1, SVG: 1, MATH: 1 };

  function htmlParts(html) {
    // DOMParser makes an inert document: its scripts never run, its images never load.
    var doc = new DOMParser().parseFromString(text(html), "text/html");
    var parts = [];
    (function walk(node) {
      Array.prototype.forEach.call(node.childNodes, function (child) {
        if (child.nodeType === 3) { parts.push(child.nodeValue); return; }
        if (child.nodeType !== 1 || SKIPPED[child.nodeName.toUpperCase()]) return;
        var name = child.nodeName.toUpperCase();
        if (name === "BR") { parts.push("\n"); return; }
        var href = name === "A" ? webUrl(child.getAttribute("href")) : null;
        if (href) { parts.push({ text: child.textContent || href, href: href }); return; }
        walk(child);
        if (name === "P" || name === "LI" || name === "BLOCKQUOTE" || name === "PRE" || /^H[1-6]$/.test(name)) {
          parts.push("\n\n");
        }
      });
    })(doc.body);
    return tidy(parts);
  }

  function tidy(parts) {   // no blank lines at the ends, at most one blank line in a row
    var out = [];
    parts.forEach(function (part) {
      var last = out[out.length - 1];
      if (typeof part === "string" && typeof last === "string") out[out.length - 1] = last + part;
      else out.push(part);
    });
    out = out.map(function (part) { return typeof part === "string" ? part.replace(/\n{3,}/g, "\n\n") : part; });
    if (typeof out[0] === "string") out[0] = out[0].replace(/^\s+/, "");
    var end = out.length - 1;
    if (typeof out[end] === "string") out[end] = out[end].replace(/\s+$/, "");
    return out.filter(function (part) { return part !== ""; });
  }

  function facetParts(record, web) {   // Bluesky: the text, with its link, mention and tag facets
    var words = text(record && record.text);
    var facets = record && Array.isArray(record.facets) ? record.facets : [];
    if (!facets.length || typeof TextEncoder !== "function") return words ? [words] : [];
    var bytes = new TextEncoder().encode(words);
    var decode = function (a, b) { return new TextDecoder().decode(bytes.subarray(a, b)); };
    var spans = facets.map(function (facet) {
      var index = facet && facet.index ? facet.index : {};
      var feature = facet && Array.isArray(facet.features) ? facet.features[0] || {} : {};
      var kind = text(feature.$type).split("#")[1];
      var href = kind === "link" ? webUrl(feature.uri)
        : kind === "mention" && text(feature.did) ? web + "/profile/" + encodeURIComponent(feature.did)
        : kind === "tag" && text(feature.tag) ? web + "/hashtag/" + encodeURIComponent(feature.tag)
        : null;
      return { start: index.byteStart, end: index.byteEnd, href: href };
    }).filter(function (span) {
      return span.href && span.start === (span.start | 0) && span.end === (span.end | 0) &&
        span.start >= 0 && span.end > span.start && span.end <= bytes.length;
    }).sort(function (a, b) { return a.start - b.start; });
    var parts = [];
    var at = 0;
    spans.forEach(function (span) {
      if (span.start < at) return;   // overlapping facets: the first one wins
      if (span.start > at) parts.push(decode(at, span.start));
      parts.push({ text: decode(span.start, span.end), href: span.href });
      at = span.end;
    });
    if (at < bytes.length) parts.push(decode(at, bytes.length));
    return parts;
  }

  function cut(parts, limit) {   // at most `limit` characters: {parts, cut}
    var out = [];
    var left = limit;
    for (var i = 0; i < parts.length; i++) {
      var part = parts[i];
      var words = typeof part === "string" ? part : part.text;
      if (words.length > left) {
        var kept = words.slice(0, left);
        if (kept) out.push(typeof part === "string" ? kept : { text: kept, href: part.href });
        return { parts: out, cut: true };
      }
      out.push(part);
      left -= words.length;
    }
    return { parts: out, cut: false };
  }

  // ------------------------------------------------------------------ reading each service

  function reply(fields) {
    fields.time = Date.parse(fields.at);
    fields.children = [];
    return fields;
  }

  function mastodon(answer, copy) {   // the status's context: its descendants, as a tree
    var root = (copy.source.match(/\/statuses\/([^\/?#]+)\/context/) || [])[1];
    var given = answer && Array.isArray(answer.descendants) ? answer.descendants : [];
    // The thread's own later parts are the post, not replies: left out (a reply to one then has
    // no parent shown, and starts a thread as a reply to the post does).
    var all = given.filter(function (s) { return !(s && typeof s === "object" && copy.parts[String(s.id)]); });
    copy.partsBelow = given.filter(function (s) {
      return s && typeof s === "object" && copy.parts[String(s.id)] && String(s.in_reply_to_id) === root;
    }).length;
    var shown = all.slice(0, MAX_REPLIES + 1);   // enough to know there are more
    var byId = {};
    var top = [];
    shown.forEach(function (s) {
      if (!s || typeof s !== "object" || s.reblog) return;
      var account = s.account || {};
      var spoiler = text(s.spoiler_text).trim();
      var warning = spoiler ? "Content warning: " + spoiler : s.sensitive === true ? "Sensitive content" : "";
      var node = reply({
        id: String(s.id), copy: copy, at: text(s.created_at), url: webUrl(s.url || s.uri),
        author: text(account.display_name) || text(account.acct) || text(account.username),
        authorUrl: webUrl(account.url), warning: warning, body: htmlParts(s.content)
      });
      var parent = byId[String(s.in_reply_to_id)];
      byId[node.id] = node;
      // A reply whose parent is not shown (the post itself, or beyond the cap) starts a thread.
      if (parent && String(s.in_reply_to_id) !== root) parent.children.push(node);
      else top.push(node);
    });
    copy.more = all.length > MAX_REPLIES || given.length >= MASTODON_LOGGED_OUT;   // Mastodon's cap counts the parts
    return top;
  }

  function labelled(labels, wanted) {   // the first label in `wanted` not negated, or null
    var negated = {};
    var list = Array.isArray(labels) ? labels : [];
    list.forEach(function (l) { if (l && l.neg === true) negated[l.val] = 1; });
    var found = list.filter(function (l) { return l && !l.neg && wanted[l.val] && !negated[l.val]; })[0];
    return found ? String(found.val) : null;
  }

  function bluesky(answer, copy) {
    var thread = answer && answer.thread;
    if (!thread || !thread.post) return [];
    var root = thread.post;
    copy.counts = [[root.replyCount, "reply", "replies"], [root.repostCount, "repost", "reposts"],
      [root.likeCount, "like", "likes"]];
    // Replies the post's author hid: the AppView still returns them, the app does not show them.
    var gate = root.threadgate && root.threadgate.record;
    var hidden = {};
    (gate && Array.isArray(gate.hiddenReplies) ? gate.hiddenReplies : []).forEach(function (uri) { hidden[uri] = 1; });
    var read = 0;
    function shown(item) {
      if (!item || typeof item !== "object" || item.blocked || item.notFound || !item.post) return null;
      if (/#(blockedPost|notFoundPost)$/.test(text(item.$type))) return null;
      var post = item.post;
      var author = post.author || {};
      var viewer = author.viewer || {};
      if (!post.record || hidden[post.uri]) return null;
      if (viewer.blockedBy || viewer.blocking || viewer.blockingByList || viewer.muted || viewer.mutedByList) return null;
      if (labelled(post.labels, { "!hide": 1 }) || labelled(author.labels, { "!hide": 1 })) return null;
      var warnedBy = labelled(post.labels, WARNING_LABELS) || labelled(author.labels, WARNING_LABELS);
      var rkey = String(post.uri || "").split("/").pop();
      var handle = text(author.handle);
      return reply({
        id: text(post.uri), copy: copy, at: text(post.record.createdAt) || text(post.indexedAt),
        url: handle ? copy.web + "/profile/" + encodeURIComponent(handle) + "/post/" + encodeURIComponent(rkey) : null,
        author: text(author.displayName) || handle, authorUrl: handle ? copy.web + "/profile/" + encodeURIComponent(handle) : null,
        warning: warnedBy ? "Content warning: " + warnedBy.replace(/^!/, "") : "",
        body: facetParts(post.record, copy.web)
      });
    }
    function part(item) {   // one of the thread's own later parts: the post, not a reply
      return !!(item && typeof item === "object" && item.post && copy.parts[text(item.post.uri)]);
    }
    copy.partsBelow = (Array.isArray(thread.replies) ? thread.replies : []).filter(part).length;
    var deepest = 20 + Object.keys(copy.parts).length;   // each part is a level of the answer
    function walk(item, depth) {
      var found = [];
      (Array.isArray(item.replies) ? item.replies : []).forEach(function (child) {
        if (read > MAX_REPLIES) { copy.more = true; return; }   // enough to know there are more
        if (part(child)) {   // left out; the replies to it are replies to the post, at this level
          if (depth < deepest) found = found.concat(walk(child, depth + 1));
          return;
        }
        var node = shown(child);
        if (!node) return;   // left out, with what is below it
        read += 1;
        if (depth < deepest) node.children = walk(child, depth + 1);
        found.push(node);
      });
      return found;
    }
    return walk(thread, 0);
  }

  function devComments(list, copy, depth) {
    var found = [];
    (Array.isArray(list) ? list : []).forEach(function (c) {
      if (!c || typeof c !== "object" || copy.read > MAX_REPLIES) { copy.more = copy.more || !!c; return; }
      var user = c.user || {};
      // A comment deleted or hidden by the post's author has no user: it is left out with its thread.
      if (!text(user.username)) return;
      copy.read += 1;
      var node = reply({
        id: text(c.id_code), copy: copy, at: text(c.created_at),
        url: c.id_code ? copy.origin + "/" + encodeURIComponent(user.username) + "/comment/" + encodeURIComponent(c.id_code) : null,
        author: text(user.name) || text(user.username), authorUrl: copy.origin + "/" + encodeURIComponent(user.username),
        warning: "", body: htmlParts(c.body_html)
      });
      if (depth < 20) node.children = devComments(c.children, copy, depth + 1);
      found.push(node);
    });
    return found;
  }

  function getJson(url) {
    return fetch(url, { headers: { Accept: "application/json" }, credentials: "omit" })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); });
  }

  var READERS = {
    mastodon: function (copy) {
      var status = copy.source.replace(/\/context(?=$|[?#])/, "");
      var counts = getJson(status).then(function (s) {
        copy.counts = [[s && s.replies_count, "reply", "replies"], [s && s.reblogs_count, "boost", "boosts"],
          [s && s.favourites_count, "favourite", "favourites"]];
      }, function () {});   // no counts: the replies still show
      return Promise.all([getJson(copy.source).then(function (a) { return mastodon(a, copy); }), counts])
        .then(function (both) { return both[0]; });
    },
    bluesky: function (copy) {
      return getJson(copy.source).then(function (a) { return bluesky(a, copy); });
    },
    forem: function (copy) {
      copy.read = 0;
      var found = [];
      function page(n) {
        var url = new URL(copy.source);
        url.searchParams.set("per_page", String(DEV_PER_PAGE));
        url.searchParams.set("page", String(n));
        return getJson(url.href).then(function (list) {
          found = found.concat(devComments(list, copy, 0));
          var full = Array.isArray(list) && list.length >= DEV_PER_PAGE;
          if (full && copy.read <= MAX_REPLIES && n < DEV_PAGES) return page(n + 1);
          if (full) copy.more = true;
          return found;
        });
      }
      return page(1);
    }
  };

  // ------------------------------------------------------------------ showing them

  function link(words, href, className) {
    var url = href ? webUrl(href) : null;
    var element = document.createElement(url ? "a" : "span");
    if (url) {
      element.href = url;
      element.rel = "nofollow ugc";
    }
    if (className) element.className = className;
    element.textContent = words;
    return element;
  }

  function more(copy, href) {
    return link("more on " + copy.name, href || copy.href, "syndicate-replies-more");
  }

  function byTime(a, b) {   // the services' times as dates; a reply without one goes last
    var x = isNaN(a.time) ? Infinity : a.time;
    var y = isNaN(b.time) ? Infinity : b.time;
    if (x !== y) return x < y ? -1 : 1;
    return a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  function when(node) {
    var element = document.createElement("time");
    if (isNaN(node.time)) {
      element.textContent = node.at || "?";
      return element;
    }
    var date = new Date(node.time);
    element.dateTime = date.toISOString();
    element.title = date.toLocaleString();
    element.textContent = date.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
    return element;
  }

  function body(node) {
    var kept = cut(node.body, MAX_TEXT);
    var p = document.createElement("p");
    p.className = "syndicate-reply-text";
    kept.parts.forEach(function (part) {
      p.append(typeof part === "string" ? part : link(part.text, part.href));
    });
    if (kept.cut) {
      p.append("\u2026 ");
      p.appendChild(more(node.copy, node.url));
    }
    if (!node.warning) return p;
    var details = document.createElement("details");   // folded: a click, Enter or Space opens it
    details.className = "syndicate-reply-cw";
    var summary = document.createElement("summary");
    summary.textContent = cut([node.warning], MAX_WARNING).parts.join("");
    details.appendChild(summary);
    details.appendChild(p);
    return details;
  }

  function item(node, depth, budget) {
    budget.left -= 1;
    var li = document.createElement("li");
    li.className = "syndicate-reply";
    var article = document.createElement("article");
    var who = document.createElement("p");
    who.className = "syndicate-reply-author";
    who.appendChild(link(node.author || "?", node.authorUrl));
    who.append(" \u00b7 ");
    var time = when(node);
    var permalink = node.url ? link("", node.url) : null;
    if (permalink) {
      permalink.appendChild(time);
      who.appendChild(permalink);
    } else {
      who.appendChild(time);
    }
    who.append(" \u00b7 " + node.copy.name);
    article.appendChild(who);
    article.appendChild(body(node));
    li.appendChild(article);
    if (node.children.length && depth >= MAX_DEPTH) {
      var deeper = document.createElement("p");
      deeper.appendChild(link("continue this thread on " + node.copy.name, node.url || node.copy.href, "syndicate-replies-more"));
      li.appendChild(deeper);
    } else if (node.children.length) {
      var list = thread(node.children, depth + 1, budget);
      if (list) li.appendChild(list);
    }
    return li;
  }

  function thread(nodes, depth, budget) {
    nodes.sort(byTime);
    var list = document.createElement("ol");
    list.className = "syndicate-thread";
    nodes.forEach(function (node) {
      if (budget.left > 0) list.appendChild(item(node, depth, budget));
      else node.copy.more = true;
    });
    return list.firstChild ? list : null;
  }

  function countsOf(copy) {
    // A service counts a thread's part 2 among part 1's replies (Mastodon's replies_count,
    // Bluesky's replyCount): it is the post. The parts seen under part 1 are taken off; when
    // the replies were not read, the one part 2 the thread has.
    var parts = copy.partsBelow === null ? Math.min(1, Object.keys(copy.parts).length) : copy.partsBelow;
    var said = (copy.counts || []).map(function (c) {
      return [c[1] === "reply" ? count(c[0]) - parts : count(c[0]), c[1], c[2]];
    }).filter(function (c) { return count(c[0]); }).map(function (c) {
      var n = count(c[0]);
      return n + " " + (n === 1 ? c[1] : c[2]);
    });
    if (!said.length) return;
    var span = document.createElement("span");
    span.className = "syndicate-counts";
    span.textContent = " (" + said.join(", ") + ")";
    copy.anchor.after(span);
  }

  function names(copies) {   // "Mastodon", "Mastodon or Bluesky", "Mastodon, Bluesky or DEV"
    var p = document.createDocumentFragment();
    copies.forEach(function (copy, n) {
      if (n) p.append(n === copies.length - 1 ? " or " : ", ");
      p.appendChild(link(copy.name, copy.reply, "syndicate-reply-on"));
    });
    return p;
  }

  function actions(copies, none) {
    var p = document.createElement("p");
    p.className = "syndicate-replies-actions";
    if (none) {
      p.append("No replies yet. Reply on ");
      p.appendChild(names(copies));
      p.append(" to comment.");
      return p;
    }
    copies.forEach(function (copy, n) {
      if (n) p.append(" \u00b7 ");
      p.appendChild(link("Reply on " + copy.name, copy.reply, "syndicate-reply-on"));
    });
    return p;
  }

  function styled() {
    if (document.getElementById("syndicate-replies-style")) return;
    var style = document.createElement("style");
    style.id = "syndicate-replies-style";
    style.textContent = STYLE;
    (document.head || document.documentElement).appendChild(style);
  }

  // ------------------------------------------------------------------ readable in any theme

  function rgba(value) {
    var m = String(value).match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    var p = m[1].split(/[\s,\/]+/).filter(Boolean).map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }

  function behind(element) {   // the opaque colour behind an element: its own, its parents', the canvas
    var layers = [];
    for (var e = element; e && e.nodeType === 1; e = e.parentElement) {
      var c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) layers.push(c);
      if (c && c[3] >= 1) break;
    }
    var colour = [255, 255, 255];
    for (var i = layers.length - 1; i >= 0; i--) {
      var a = layers[i][3];
      colour = colour.map(function (v, n) { return layers[i][n] * a + v * (1 - a); });
    }
    return colour;
  }

  function contrast(a, b) {   // WCAG 2's contrast ratio of two sRGB colours
    function luminance(c) {
      var l = c.slice(0, 3).map(function (v) {
        v /= 255;
        return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
      });
      return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
    }
    var x = luminance(a), y = luminance(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  }

  // A theme's link colour can be too faint for its background (MkDocs's own theme: #2fa4e7 on
  // white, 2.8:1): such links take the text's colour, underlined, so they stay links and readable
  // (WCAG's 4.5:1). Where the theme's links are readable (Material, light or dark), they stay as
  // they are.
  function readable(root) {
    if (typeof getComputedStyle !== "function") return;
    root.querySelectorAll("a").forEach(function (a) {
      var colour = rgba(getComputedStyle(a).color);
      if (!colour) return;
      var back = behind(a);
      var seen = colour.slice(0, 3).map(function (v, n) { return v * colour[3] + back[n] * (1 - colour[3]); });
      if (contrast(seen, back) >= 4.5) return;
      a.style.color = "inherit";
      a.style.textDecoration = "underline";
    });
  }

  var sections = 0;

  function placeholder(block) {   // the section's place, kept while the services answer
    styled();
    var section = document.createElement("section");
    section.className = "syndicate-replies";
    section.setAttribute("aria-busy", "true");
    var heading = document.createElement("h2");
    heading.id = "syndicate-replies-" + ++sections;
    heading.textContent = block.getAttribute("data-replies-heading") || "Replies";
    section.setAttribute("aria-labelledby", heading.id);
    section.appendChild(heading);
    var status = document.createElement("p");
    status.className = "syndicate-replies-status";
    status.textContent = "Loading replies\u2026";
    section.appendChild(status);
    block.after(section);
    // Room down to the window's bottom, kept: what is below (a footer) is out of sight before the
    // replies come, so their list growing moves nothing the reader sees (no layout shift).
    // Material already keeps a short page's footer at the window's bottom.
    var box = section.getBoundingClientRect();
    var room = window.innerHeight - box.top;
    if (room > box.height) section.style.minHeight = Math.ceil(room) + "px";
    return section;
  }

  function show(section, copies, lists, block) {
    var answered = copies.filter(function (copy, n) { return lists[n] !== null; });
    if (!answered.length) {   // no service answered: the plain links stay, and nothing else
      section.remove();
      return;
    }
    copies.forEach(countsOf);
    var top = [];
    lists.forEach(function (list) { if (list) top = top.concat(list); });
    section.removeChild(section.querySelector(".syndicate-replies-status"));
    var list = thread(top, 1, { left: MAX_REPLIES });
    if (list) section.appendChild(list);
    answered.forEach(function (copy) {   // a copy with more replies than are shown
      if (!copy.more) return;
      var rest = document.createElement("p");
      rest.appendChild(more(copy));
      section.appendChild(rest);
    });
    section.appendChild(actions(answered, !list));
    readable(section);
    readable(block);
    section.removeAttribute("aria-busy");
  }

  function load(block) {
    var copies = [];
    block.querySelectorAll("a[data-replies][data-service-type]").forEach(function (a) {
      var type = a.getAttribute("data-service-type");
      var source = webUrl(a.getAttribute("data-replies"));
      var href = webUrl(a.href);
      if (!READERS[type] || !source || !href || typeof fetch !== "function") return;
      // A thread's later parts, by the ids the service's answer names them with (no prototype: an
      // id "constructor" is no part).
      var parts = Object.create(null);
      (a.getAttribute("data-parts") || "").split(/\s+/).forEach(function (id) { if (id) parts[id] = 1; });
      copies.push({
        type: type, source: source, href: href, anchor: a, name: a.textContent || type,
        reply: type === "forem" ? href.replace(/#.*$/, "") + "#comments" : href,
        web: (webUrl(a.getAttribute("data-web")) || "https://bsky.app").replace(/\/+$/, ""),
        origin: new URL(href).origin, more: false, counts: null, parts: parts, partsBelow: null
      });
    });
    if (!copies.length) return;
    var section = placeholder(block);
    var asks = copies.map(function (copy) {
      return READERS[copy.type](copy).catch(function () { return null; });   // a service down: its replies are not shown
    });
    Promise.all(asks).then(function (lists) { show(section, copies, lists, block); });
  }

  // ------------------------------------------------------------------ pages the plugin did not build

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
        var parts = Array.isArray(replies.parts) ? replies.parts.filter(function (id) {
          return typeof id === "string" && id && !/\s/.test(id);
        }) : [];
        if (parts.length) a.setAttribute("data-parts", parts.join(" "));
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
    getJson(listing)
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

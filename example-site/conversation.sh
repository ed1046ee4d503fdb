#!/bin/sh
# A conversation on the example's first post, in the sandbox, for `comments: true` to show:
# replies from Mastodon, Bluesky and DEV, a thread nested under a reply, a reply behind a content
# warning, one the author hid (not shown), and likes and reposts beside the links.
#
#   mkdocs-syndicate sandbox -f example-site/mkdocs.yml &   # serves the emulators' answers
#   mkdocs build -f example-site/mkdocs.yml                  # announces the posts to it
#   sh example-site/conversation.sh                           # this
#   SYNDICATE_MODE=plan mkdocs serve -f example-site/mkdocs.yml
set -eu
cd "$(dirname "$0")"
post=blog/2026/11/20/hello-fediverse/
sandbox() { mkdocs-syndicate sandbox -f mkdocs.yml "$@"; }
id() { sed -n 's/^reply \([^ ]*\) added.*/\1/p'; }

ana=$(sandbox reply "$post" mastodon --author ana --at 2026-11-20T10:12:00Z \
  --text '<p>Thanks for writing this up! Does the ledger survive a force-push?</p>' | id)
bo=$(sandbox reply "$post" mastodon --author bo --to "$ana" --at 2026-11-20T11:40:00Z \
  --text '<p>It is a YAML file in git, so a force-push can drop records. The next run reads each service before sending again, though: see <a href="https://example.com/blog/">the blog</a>.</p>' | id)
sandbox reply "$post" mastodon --author ana --to "$bo" --at 2026-11-20T12:05:00Z \
  --text '<p>Good to know, thanks!</p>' >/dev/null
sandbox reply "$post" mastodon --author cy --at 2026-11-21T08:30:00Z --warning 'Rant about CI' \
  --text '<p>My pipeline retried a deploy four times last week and announced a post twice. A ledger would have saved me.</p>' >/dev/null
dee=$(sandbox reply "$post" bluesky --author dee --at 2026-11-20T19:00:00+09:00 \
  --text 'The link card looks right on Bluesky.' | id)
sandbox reply "$post" bluesky --author eve --to "$dee" --at 2026-11-20T15:20:00Z \
  --text 'Same on my client.' >/dev/null
sandbox reply "$post" bluesky --author spam --hidden --text 'Buy followers now' >/dev/null
sandbox reply "$post" devto --author fay --at 2026-11-22T09:00:00Z \
  --text '<p>Read it here on DEV: the canonical link points back to your site, nice.</p>' >/dev/null
sandbox react "$post" mastodon --likes 12 --reposts 4 >/dev/null
sandbox react "$post" bluesky --likes 8 --reposts 2 >/dev/null
echo "a conversation added to $post"

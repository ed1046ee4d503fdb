// Bluesky's AppView with its PLC directory, PDS and moderation service (Ozone), as
// @atproto/dev-env's TestNetwork runs them for atproto's own tests, for the `realserver` tier's
// comments test. Needs a Postgres and a Redis (DB_POSTGRES_URL, DB_POSTGRES_SCHEMA, REDIS_HOST,
// which tests/realserver_appview.py starts). Prints one JSON line — the AppView's and the PDS's
// addresses, the accounts it made and the moderation service's DID — then answers one JSON line
// per command line read on its standard input, and stops when that input closes:
//
//   {"op": "sync"}                                  the AppView indexes all the PDS wrote so far
//   {"op": "label", "uri": U, "cid": C, "val": V}   the moderation service labels a post
//
// "label" asks the moderation service (Ozone, the AppView's modServiceDid, one of its
// labelsFromIssuerDids) for the label as a moderator would (tools.ozone.moderation.emitEvent,
// #modEventLabel), reads back the label Ozone issued (com.atproto.label.queryLabels, its public
// read), and hands it to the AppView. This AppView version has no label subscriber: in
// production a separate ingester reads the labelers' subscribeLabels streams into the AppView's
// `label` table; dev-env's own seeds (seed/basic.js) write that table directly, and so does
// this, with Ozone's label as it issued it.
import readline from 'node:readline'

const { TestNetwork } = await import('@atproto/dev-env')
const network = await TestNetwork.create({})
const agent = network.pds.getAgent()
const accounts = []
for (const name of ['alice', 'bob', 'carol', 'dan']) {
  const handle = `${name}.test`
  const password = `${name}-password-1234`
  await agent.createAccount({ handle, email: `${name}@example.com`, password })
  accounts.push({ handle, password, did: agent.session.did })
}
await network.processAll()
const labeler = network.bsky.ctx.cfg.modServiceDid
process.stdout.write(
  JSON.stringify({ appview: network.bsky.url, pds: network.pds.url, plc: network.plc.url, accounts, labeler }) + '\n',
)

const commands = {
  async sync() {
    await network.processAll()
  },
  async label({ uri, cid, val }) {
    await network.ozone.getModClient().emitEvent({
      event: { $type: 'tools.ozone.moderation.defs#modEventLabel', createLabelVals: [val], negateLabelVals: [] },
      subject: { $type: 'com.atproto.repo.strongRef', uri, cid },
    })
    await network.ozone.processAll()
    const answer = await fetch(
      `${network.ozone.url}/xrpc/com.atproto.label.queryLabels?uriPatterns=${encodeURIComponent(uri)}`,
    )
    const { labels } = await answer.json()
    const issued = labels.filter((label) => label.val === val && !label.neg)
    if (issued.length !== 1) throw new Error(`Ozone issued ${JSON.stringify(labels)} for ${uri}`)
    const [label] = issued
    await network.bsky.db.db
      .insertInto('label')
      .values({ src: label.src, uri: label.uri, cid: label.cid ?? '', val: label.val, neg: false, cts: label.cts })
      .execute()
  },
}

let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  // Its databases are thrown away after: a close that hangs (as TestNetwork's can, waiting on
  // its subscriptions) does not keep the test waiting.
  await Promise.race([network.close(), new Promise((resolve) => setTimeout(resolve, 5000))])
  process.exit(0)
}
const lines = readline.createInterface({ input: process.stdin })
lines.on('line', async (line) => {
  const command = JSON.parse(line)
  try {
    await commands[command.op](command)
    process.stdout.write(JSON.stringify({ ok: true }) + '\n')
  } catch (error) {
    process.stdout.write(JSON.stringify({ ok: false, error: String(error) }) + '\n')
  }
})
lines.on('close', stop)
process.on('SIGTERM', stop)

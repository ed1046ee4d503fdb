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
// The AppView of this version has no label subscriber: in production labels reach it from the
// labelers' subscribeLabels streams by a separate ingester. dev-env's own seeds (seed/basic.js)
// put a label straight into the AppView's `label` table; "label" does the same, with the
// moderation service (the AppView's modServiceDid, one of its labelsFromIssuerDids) as source.
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
    await network.bsky.db.db
      .insertInto('label')
      .values({ uri, cid, val, cts: new Date().toISOString(), neg: false, src: labeler })
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

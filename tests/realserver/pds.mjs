// The reference Bluesky PDS (with its PLC directory), as @atproto/dev-env runs it for atproto's own
// tests, for the `realserver` tier. Prints one JSON line — the PDS's address and the accounts it
// made — then serves until its standard input closes.
//
//   node pds.mjs [--rate-limits]
import { TestNetworkNoAppView } from '@atproto/dev-env'

const rateLimitsEnabled = process.argv.includes('--rate-limits')
const network = await TestNetworkNoAppView.create({ pds: { rateLimitsEnabled } })
const agent = network.pds.getAgent()
const accounts = []
for (const name of ['alice', 'bob']) {
  const handle = `${name}.test`
  const password = `${name}-password-1234`
  await agent.createAccount({ handle, email: `${name}@example.com`, password })
  accounts.push({ handle, password, did: agent.session.did })
}
process.stdout.write(JSON.stringify({ url: network.pds.url, plc: network.plc.url, accounts }) + '\n')

const stop = async () => {
  await network.close()
  process.exit(0)
}
process.stdin.on('end', stop)
process.stdin.resume()
process.on('SIGTERM', stop)

// The reference Bluesky PDS (with its PLC directory), as @atproto/dev-env runs it for atproto's own
// tests, for the `realserver` tier. Prints one JSON line — the PDS's address, the accounts it made
// and the origin of its clock — then serves until its standard input closes.
//
//   node pds.mjs [--rate-limits] [--time-scale N]
//
// --rate-limits turns on the PDS's own limits (createSession: 30 in 5 minutes per account).
// --time-scale N runs the process's clock N times fast from its start (Date, and the delays of
// setTimeout/setInterval, which rate-limiter-flexible expires its windows with), so a 5-minute
// window passes in 300/N seconds. The server's code is unchanged; the test's client runs on the
// same scaled clock (the origin printed here), so both agree on every time.
const argument = (name) => {
  const at = process.argv.indexOf(name)
  return at >= 0 ? process.argv[at + 1] : undefined
}
const rateLimitsEnabled = process.argv.includes('--rate-limits')
const scale = Number(argument('--time-scale') ?? '1')
const origin = Date.now()

if (scale !== 1) {
  const RealDate = Date
  const realNow = RealDate.now.bind(RealDate)
  const scaledNow = () => origin + (realNow() - origin) * scale
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      super(...(args.length ? args : [scaledNow()]))
    }
    static now() {
      return scaledNow()
    }
  }
  for (const name of ['setTimeout', 'setInterval']) {
    const real = globalThis[name]
    globalThis[name] = (callback, delay, ...rest) => real(callback, (Number(delay) || 0) / scale, ...rest)
  }
}

// Imported after the clock is set, so every module sees the scaled one.
const { TestNetworkNoAppView } = await import('@atproto/dev-env')
const network = await TestNetworkNoAppView.create({ pds: { rateLimitsEnabled } })
const agent = network.pds.getAgent()
const accounts = []
for (const name of ['alice', 'bob']) {
  const handle = `${name}.test`
  const password = `${name}-password-1234`
  await agent.createAccount({ handle, email: `${name}@example.com`, password })
  accounts.push({ handle, password, did: agent.session.did })
}
process.stdout.write(JSON.stringify({ url: network.pds.url, plc: network.plc.url, accounts, origin, scale }) + '\n')

const stop = async () => {
  await network.close()
  process.exit(0)
}
process.stdin.on('end', stop)
process.stdin.resume()
process.on('SIGTERM', stop)
